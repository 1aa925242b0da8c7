"""Flow domains (FLAP, FlowAgent): APIs with named inputs and outputs, and intents as ordered flow steps.

The spec model, its meaning (every input producible at its step, no data cycle within a step, the gold API
order), the planner-independent judge of a plan (`plan_violations`) and the PDDL names of a flow
domain's APIs and items. Generating packs from specs is `pipeline.authoring.flow_packs`; FLAP's plan
metrics are `pipeline.evaluation.flows`.
"""

from __future__ import annotations

import graphlib
import re
from collections import Counter

from pydantic import BaseModel, Field, field_validator

Input = str | list[str]  # one item, or one of several items


class FlowApi(BaseModel):
    inputs: list[Input] = Field(default_factory=list, alias="in")
    outputs: list[str] = Field(default_factory=list, alias="out")
    description: str = ""

    model_config = {"populate_by_name": True}


class FlowStep(BaseModel):
    step: str
    apis: list[str]


class IntentInfo(BaseModel):
    """What the generator input may add to an intent: how users ask for it."""
    description: str = ""
    examples: list[str] = []


class FlowDomain(BaseModel):
    name: str
    description: str = ""
    apis: dict[str, FlowApi]
    intents: dict[str, list[FlowStep]]
    intent_info: dict[str, IntentInfo] = {}

    @field_validator("intents")
    @classmethod
    def _non_empty(cls, intents: dict[str, list[FlowStep]]) -> dict[str, list[FlowStep]]:
        for intent, steps in intents.items():
            if not steps or any(not s.apis for s in steps):
                raise ValueError(f"intent {intent!r} has no steps or a step without APIs")
        return intents


class FlowSpecError(ValueError):
    """A flow spec that cannot give plans: the message names the domain, intent, step and API; `key` is
    the dotted spec key it is about (`slots.2.type`), so that a loader can point at its line."""

    def __init__(self, message: str, key: str | None = None):
        super().__init__(message)
        self.key = key


_IDENTIFIER = re.compile(r"[A-Za-z][A-Za-z0-9_]*")
_PACK_NAME = re.compile(r"[a-z][a-z0-9_]*")


# --- the spec's meaning ------------------------------------------------------------------------------

def producers(domain: FlowDomain) -> dict[str, list[str]]:
    """item -> the APIs that output it."""
    made: dict[str, list[str]] = {}
    for api, spec in domain.apis.items():
        for item in spec.outputs:
            made.setdefault(item, []).append(api)
    return made


def input_options(needed: Input) -> list[str]:
    return [needed] if isinstance(needed, str) else list(needed)


def _within_step_order(domain: FlowDomain, intent: str, index: int, available: set[str]) -> list[str]:
    """A data-respecting order of one step's APIs; raises on a cycle or an input nothing can give."""
    step = domain.intents[intent][index]
    where = f"domain {domain.name!r}, intent {intent!r}, step {index + 1} ({step.step!r})"
    in_step = {item: api for api in step.apis for item in domain.apis[api].outputs}
    graph: dict[str, set[str]] = {}
    for api in step.apis:
        graph[api] = set()
        for needed in domain.apis[api].inputs:
            options = input_options(needed)
            if any(item in available for item in options):
                continue
            local = [in_step[item] for item in options if item in in_step and in_step[item] != api]
            if not local:
                wanted = " or ".join(options)
                raise FlowSpecError(f"{where}: API {api!r} needs {wanted!r}, which no API of this or an "
                                    "earlier step produces")
            graph[api] |= set(local)
    try:
        return list(graphlib.TopologicalSorter(graph).static_order())
    except graphlib.CycleError as exc:
        cycle = " -> ".join(exc.args[1])
        raise FlowSpecError(f"{where}: the APIs' data form a cycle ({cycle})") from None


def check_flow_domain(domain: FlowDomain) -> None:
    """Reject a spec that cannot give correct plans, with a message that says where and why."""
    if not _PACK_NAME.fullmatch(domain.name):
        raise FlowSpecError(f"domain name {domain.name!r}: use lower case letters, digits and _")
    for api, spec in domain.apis.items():
        if not _IDENTIFIER.fullmatch(api) or api.lower() == "next_step":
            raise FlowSpecError(f"domain {domain.name!r}: API name {api!r} is not an identifier (or is reserved)")
        for item in spec.outputs + [i for need in spec.inputs for i in input_options(need)]:
            if not _IDENTIFIER.fullmatch(item):
                raise FlowSpecError(f"domain {domain.name!r}: API {api!r}: data item {item!r} is not an identifier")
    for intent, steps in domain.intents.items():
        if not _PACK_NAME.fullmatch(intent):
            raise FlowSpecError(f"domain {domain.name!r}: intent name {intent!r}: use lower case letters, "
                                "digits and _")
        seen: set[str] = set()
        for number, step in enumerate(steps, 1):
            for api in step.apis:
                if api not in domain.apis:
                    raise FlowSpecError(f"domain {domain.name!r}, intent {intent!r}, step {number}: unknown API "
                                        f"{api!r}")
                if api in seen:
                    raise FlowSpecError(f"domain {domain.name!r}, intent {intent!r}: API {api!r} appears twice "
                                        "in the flow")
                seen.add(api)
        gold_plan(domain, intent)  # raises on an unproducible input or a cycle


def gold_plan(domain: FlowDomain, intent: str) -> list[str]:
    """The intent's flow as one API sequence: steps in order, each step's APIs in data order."""
    available: set[str] = set()
    order: list[str] = []
    for index, step in enumerate(domain.intents[intent]):
        ordered = _within_step_order(domain, intent, index, available)
        order += ordered
        for api in ordered:
            available |= set(domain.apis[api].outputs)
    return order


def step_of(domain: FlowDomain, intent: str) -> dict[str, int]:
    return {api: i for i, step in enumerate(domain.intents[intent]) for api in step.apis}


# --- judging a plan, independent of the planner -------------------------------------------------------

def plan_violations(domain: FlowDomain, intent: str, apis: list[str]) -> list[str]:
    """Every way an API sequence breaks the intent's flow (empty: it follows it)."""
    problems: list[str] = []
    flow_steps = step_of(domain, intent)
    unknown = [a for a in apis if a not in domain.apis]
    problems += [f"{a} is not an API of {domain.name}" for a in unknown]
    counts = Counter(apis)
    problems += [f"{a} is not part of the {intent} flow" for a in counts if a in domain.apis and a not in flow_steps]
    problems += [f"{a} is called {n} times" for a, n in counts.items() if n > 1]
    problems += [f"{a} is never called" for a in flow_steps if a not in counts]
    produced: set[str] = set()
    highest = -1
    for position, api in enumerate(apis, 1):
        spec = domain.apis.get(api)
        if spec is None:
            continue
        for needed in spec.inputs:
            if not set(input_options(needed)) & produced:
                problems.append(f"step {position}: {api} runs before its input {' or '.join(input_options(needed))} "
                                "is produced")
        step = flow_steps.get(api)
        if step is not None:
            if step < highest:
                problems.append(f"step {position}: {api} (flow step {step + 1}) runs after flow step {highest + 1}")
            highest = max(highest, step)
        produced |= set(spec.outputs)
    return problems



# --- PDDL names -------------------------------------------------------------------------------------

def api_constant(api: str) -> str:
    """The PDDL object naming an API (PDDL names are case-insensitive; the API's own name is kept as the
    action name and restored from the pack when the plan is read)."""
    return "api_" + re.sub(r"(?<!^)(?=[A-Z])", "_", api).lower()


def item_constant(item: str) -> str:
    """The PDDL object naming a data item (prefixed: an item may be called like a PDDL type or keyword)."""
    return "i_" + item.lower()
