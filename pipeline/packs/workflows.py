"""Workflow goals expanded into one call per API, so that the planner orders them by their data and asks
for each missing slot once per call that takes it.

`_goal(g1, transfer_money). _amount(g1, "250").` becomes a goal per step (`g1s1`, `g1s2`, ...), each
with the slots it takes from the workflow goal's facts and, for what an earlier step produces, a
reference to that step.
"""

from __future__ import annotations

import re
from collections.abc import Collection

from pipeline.packs.pack import Pack
from pipeline.records import CheckedIR, IRFact

_STEP_ID = re.compile(r"^(?P<goal>.+)s(?P<step>\d+)$")


def step_id(goal_id: str, step: int) -> str:
    return f"{goal_id}s{step}"


def workflow_goal_id(goal_id: str, workflow_ids: Collection[str]) -> str:
    """The workflow goal a step's id belongs to (`g1s2` -> `g1`), or the id itself."""
    match = _STEP_ID.match(goal_id)
    return match.group("goal") if match and match.group("goal") in workflow_ids else goal_id


def expand_workflows(checked: CheckedIR, pack: Pack) -> CheckedIR:
    goals = {str(f.arguments[0]): str(f.arguments[1]) for f in checked.facts if f.predicate == "_goal"}
    workflows = {gid for gid, goal in goals.items() if goal in pack.spec.goals and pack.spec.goals[goal].workflow}
    if not workflows:
        return checked
    facts = [f for f in checked.facts if str(f.arguments[0]) not in workflows]
    for gid in sorted(workflows):
        given = {f.predicate.removeprefix("_"): f for f in checked.facts
                 if str(f.arguments[0]) == gid and f.predicate != "_goal"}
        producer: dict[str, str] = {}
        for step, api in enumerate(pack.spec.goals[goals[gid]].workflow, 1):
            sid = step_id(gid, step)
            facts.append(IRFact(predicate="_goal", arguments=[sid, pack.goal_of_api(api)], constants=[True, True]))
            for argument in pack.spec.apis[api].arguments:
                if argument in producer:
                    facts.append(IRFact(predicate=f"_{argument}", arguments=[sid, producer[argument]],
                                        constants=[True, True]))
                elif argument in given:
                    facts.append(given[argument].model_copy(update={"arguments": [sid, *given[argument].arguments[1:]]}))
            producer[pack.spec.apis[api].produces] = sid
    return CheckedIR(facts=facts)
