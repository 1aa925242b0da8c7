"""The session's goals and their values, and how a message's facts change them: the goals of an opening's
IR, the goals a later message adds, and the values it gives or corrects (`apply_delta`)."""

from __future__ import annotations

import itertools
import re
from datetime import date

from pipeline.packs.pack import Pack
from pipeline.records import CheckedIR, Run, StageError
from pipeline.sessions.delta import same_value, takes_any_words
from pipeline.sessions.records import Given, SessionState
from pipeline.stages.check import check_ir


def goals_from_ir(checked: CheckedIR, turn: int, pack: Pack) -> list[Given]:
    """The session's goals from an opening's IR. One span is one value: words given for two arguments of
    one goal ("Bella Notte" as the restaurant and the contact name) stay with the first, and a name or
    free text inside another free value of the goal ("Petit Jardin" of "Le Petit Jardin") is no value; a
    name inside an email or phone is still a name."""
    goals: dict[str, Given] = {}
    for fact in checked.facts:
        if fact.predicate == "_goal":
            goals[str(fact.arguments[0])] = Given(goal_id=str(fact.arguments[0]), goal=str(fact.arguments[1]))
    for fact in checked.facts:
        gid, predicate = str(fact.arguments[0]), fact.predicate.removeprefix("_")
        if fact.predicate == "_goal" or gid not in goals:
            continue
        if fact.constants[1]:
            goals[gid].refs[predicate] = str(fact.arguments[1])
        elif str(fact.arguments[1]) not in goals[gid].values.values():
            goals[gid].values[predicate] = str(fact.arguments[1])
            goals[gid].turns[predicate] = turn
    for given in goals.values():
        for predicate, words in list(given.values.items()):
            if takes_any_words(pack, predicate) and any(
                    _inside(words, other) for name, other in given.values.items()
                    if name != predicate and takes_any_words(pack, name)):
                del given.values[predicate], given.turns[predicate]
    return list(goals.values())


def fresh_goal_ids(state: SessionState):
    """Goal ids the session has not given yet, in order (g1, g2, ...)."""
    taken = {g.goal_id for g in state.goals}
    return (f"g{n}" for n in itertools.count(1) if f"g{n}" not in taken)


def add_goals(pack: Pack, state: SessionState, run: Run, turn: int, answering: bool = False) -> bool:
    """Add the goals a later message's own translation asks for that the session lacks, under new ids; a
    reference to a goal the session has by that name points at the session's ("and call me about that
    report"). A message `answering` the question asked adds no search that only restates it
    (`_restates`). Whether any was added."""
    if run.ir is None or run.status == "failed":
        return False
    try:
        found = goals_from_ir(check_ir(run.ir, pack), turn, pack)
    except StageError:
        return False
    have = {g.goal: g.goal_id for g in state.goals}
    ids = {g.goal_id: have.get(g.goal) for g in found}
    added = [g for g in found if g.goal not in have and not (answering and _restates(pack, state, g))]
    fresh = fresh_goal_ids(state)
    for given in added:
        ids[given.goal_id] = given.goal_id = next(fresh)
    for given in added:
        given.refs = {name: ids[ref] for name, ref in given.refs.items() if ids.get(ref)}
    state.goals.extend(added)
    return bool(added)


def _restates(pack: Pack, state: SessionState, given: Given) -> bool:
    """A search whose every value a goal of the session already has: said in an answer ("somewhere
    to eat in Fresno" to "which city?" while booking a table there), it is how the answer was put,
    no search of its own. A search with a value the session lacks, or none at all, is asked for."""
    goal = pack.spec.goals[given.goal]
    if goal.workflow or pack.spec.apis[goal.api].effects or not given.values:
        return False
    today = date.fromisoformat(state.today)
    return all(any(name in g.values and same_value(pack, name, value, g.values[name], today) for g in state.goals)
               for name, value in given.values.items())


def _inside(words: str, other: str) -> bool:
    return len(words) < len(other) and re.search(rf"(?<!\w){re.escape(words.lower())}(?!\w)", other.lower()) is not None


def apply_delta(pack: Pack, state: SessionState, facts: list[tuple[str, str, str]], turn: int) -> str:
    """Write the delta into the state; what kind of turn it was: answer, jump, switch or unrelated."""
    by_id = {g.goal_id: g for g in state.goals}
    answered = changed = given_new = False
    for gid, predicate, words in facts:
        given = by_id.get(gid)
        if given is None:
            continue
        gives = set(pack.spec.ir_extra[predicate].gives) if predicate in pack.spec.ir_extra else {predicate}
        if state.pending and state.pending[0] == gid and state.pending[1] in gives:
            answered = True
        # An argument given again, or given together by a period-like fact, replaces what it covers.
        covering = [name for name in given.values if name in pack.spec.ir_extra
                    and set(pack.spec.ir_extra[name].gives) & gives]
        replaced = [name for name in [*gives, *covering, predicate] if name in given.values]
        if any(given.values[name] != words for name in replaced):
            changed = True
        elif not replaced:
            given_new = True
        for name in replaced:
            given.values.pop(name, None)
            if name in pack.spec.ir_extra:  # what the dropped fact gave besides this keeps its value
                for part in set(pack.spec.ir_extra[name].gives) - gives:
                    if part in given.normalized and part not in given.values:
                        given.values[part] = given.normalized[part]
        given.values[predicate] = words
        given.turns[predicate] = turn
        if takes_any_words(pack, predicate):  # one span is one value, across turns too: an
            for name in [n for n, other in given.values.items()  # earlier reading of these words goes
                         if n != predicate and given.turns.get(n, turn) < turn and takes_any_words(pack, n)
                         and (other.lower() == words.lower() or _inside(other, words))]:
                del given.values[name], given.turns[name]
    return "answer" if answered else "switch" if changed else "jump" if given_new else "unrelated"
