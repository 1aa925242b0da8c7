"""Flow-adherent planning (FLAP): business flows and API specs -> packs whose every plan follows the flow.

A flow domain is a set of APIs (named inputs and outputs; an input may accept one of several items) and
intents, each an ordered list of flow steps (each step a set of APIs). The spec is checked first (every
input producible at its step, no cycle within a step). The generated domain PDDL makes the flow and
the data dependencies action preconditions, so the planner cannot return a plan that breaks them.

This module also holds the planner-independent judge of flow plans (`plan_violations`) and FLAP's
plan metrics (`flow_metrics`), both computed from the spec alone.
"""

from __future__ import annotations

import graphlib
import re
from collections import Counter
from pathlib import Path

import yaml
from pydantic import BaseModel, Field, ValidationError, field_validator

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
    """A flow spec that cannot give plans: the message names the domain, intent, step and API."""


_IDENTIFIER = re.compile(r"[A-Za-z][A-Za-z0-9_]*")
_PACK_NAME = re.compile(r"[a-z][a-z0-9_]*")


def load_flow_domains(path: Path, info_path: Path | None = None) -> list[FlowDomain]:
    """Read `domains:` from a flows spec (and, optionally, intent descriptions and example requests
    from a second file with the same `domains: {name: {intents: {intent: {description, examples}}}}`)."""
    raw = yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {}
    info = (yaml.safe_load(Path(info_path).read_text(encoding="utf-8")) or {}) if info_path else {}
    domains = []
    for name, body in (raw.get("domains") or {}).items():
        extra = ((info.get("domains") or {}).get(name) or {})
        try:
            domains.append(FlowDomain(name=name, description=extra.get("description", ""),
                                      apis=body.get("apis") or {}, intents=body.get("intents") or {},
                                      intent_info=extra.get("intents") or {}))
        except ValidationError as exc:
            raise FlowSpecError(f"{path}: domain {name!r}: {exc}") from None
    return domains


# --- the spec's meaning ------------------------------------------------------------------------------

def producers(domain: FlowDomain) -> dict[str, list[str]]:
    """item -> the APIs that output it."""
    made: dict[str, list[str]] = {}
    for api, spec in domain.apis.items():
        for item in spec.outputs:
            made.setdefault(item, []).append(api)
    return made


def _options(needed: Input) -> list[str]:
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
            options = _options(needed)
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
        for item in spec.outputs + [i for need in spec.inputs for i in _options(need)]:
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


def api_dependencies(domain: FlowDomain, intent: str) -> dict[str, set[str]]:
    """API -> the APIs of the intent's flow it depends on for data (for a one-of input: every flow API
    that produces one of its options and runs no later in the flow)."""
    flow = gold_plan(domain, intent)
    position = {api: i for i, api in enumerate(flow)}
    deps: dict[str, set[str]] = {api: set() for api in flow}
    for api in flow:
        for needed in domain.apis[api].inputs:
            for other in flow:
                if other != api and position[other] < position[api] and \
                        set(domain.apis[other].outputs) & set(_options(needed)):
                    deps[api].add(other)
    return deps


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
            if not set(_options(needed)) & produced:
                problems.append(f"step {position}: {api} runs before its input {' or '.join(_options(needed))} "
                                "is produced")
        step = flow_steps.get(api)
        if step is not None:
            if step < highest:
                problems.append(f"step {position}: {api} (flow step {step + 1}) runs after flow step {highest + 1}")
            highest = max(highest, step)
        produced |= set(spec.outputs)
    return problems


def flow_metrics(domain: FlowDomain | None, gold_intent: str | None, apis: list[str]) -> dict:
    """FLAP's plan metrics against the gold intent's flow:
    edits: additions + deletions to turn the plan's API multiset into the gold one;
    inconsistent_apis: plan APIs placed before an API (of the gold flow) they depend on for data, or in a
    plan without it;
    inconsistent_steps: flow steps that begin in the plan before a flow step that must come first has
    begun; hallucinated: plan APIs the domain does not have."""
    gold = gold_plan(domain, gold_intent) if domain is not None and gold_intent else []
    missing, extra = Counter(gold) - Counter(apis), Counter(apis) - Counter(gold)
    figures = {"edits": sum(missing.values()) + sum(extra.values()), "apis": len(apis),
               "hallucinated": sum(1 for a in apis if domain is None or a not in domain.apis),
               "inconsistent_apis": 0, "steps": 0, "inconsistent_steps": 0}
    if not gold:
        return figures
    deps = api_dependencies(domain, gold_intent)
    first = {}
    for position, api in enumerate(apis):
        first.setdefault(api, position)
    for position, api in enumerate(apis):
        if any(first.get(dep, len(apis)) > position for dep in deps.get(api, ())):
            figures["inconsistent_apis"] += 1
    steps = step_of(domain, gold_intent)
    begun: dict[int, int] = {}
    for position, api in enumerate(apis):
        if api in steps:
            begun.setdefault(steps[api], position)
    figures["steps"] = len(begun)
    for step, position in begun.items():
        if any(begun.get(earlier, len(apis)) > position for earlier in range(step)):
            figures["inconsistent_steps"] += 1
    return figures


# --- generating the pack -----------------------------------------------------------------------------

GENERATOR = "make-flow-packs"


def api_constant(api: str) -> str:
    """The PDDL object naming an API (PDDL names are case-insensitive; the API's own name is kept as the
    action name and restored from the pack when the plan is read)."""
    return "api_" + re.sub(r"(?<!^)(?=[A-Z])", "_", api).lower()


def item_constant(item: str) -> str:
    """The PDDL object naming a data item (prefixed: an item may be called like a PDDL type or keyword)."""
    return "i_" + item.lower()


def intent_document(domain: FlowDomain, intent: str) -> str:
    """A description for an intent the spec leaves undescribed: its name and its steps."""
    steps = "; ".join(step.step for step in domain.intents[intent])
    return f"{intent.replace('_', ' ').capitalize()}. Steps: {steps}."


def flow_pack_spec(domain: FlowDomain) -> dict:
    """pack.yaml for a flow domain: one goal per intent (no arguments: the flow gathers what it needs),
    the flows and API specs under `flow:` for the compiler, the plan reader and the validator."""
    from pipeline.packgen import GENERIC_ERRORS

    goals, apis = {}, {}
    for intent in domain.intents:
        info = domain.intent_info.get(intent, IntentInfo())
        goals[intent] = {"api": intent, "description": info.description or intent_document(domain, intent),
                         "examples": list(info.examples)}
        apis[intent] = {"arguments": [], "produces": "flow_result",
                        "description": f"runs the {intent.replace('_', ' ')} flow"}
    flow = {"apis": {name: {"in": api.inputs, "out": api.outputs, "description": api.description}
                     for name, api in domain.apis.items()},
            "intents": {intent: [{"step": s.step, "apis": s.apis} for s in steps]
                        for intent, steps in domain.intents.items()}}
    return {"name": domain.name, "description": domain.description or f"{domain.name.replace('_', ' ')} flows",
            "max_goals": 1, "goals": goals, "apis": apis, "flow": flow, "errors": dict(GENERIC_ERRORS)}


def flow_domain_pddl(domain: FlowDomain) -> str:
    from pipeline.packgen import render

    items = sorted({item_constant(i) for a in domain.apis.values() for i in a.outputs} |
                   {item_constant(i) for a in domain.apis.values() for need in a.inputs for i in _options(need)})
    apis = [{"name": name, "constant": api_constant(name), "description": api.description,
             "inputs": [[item_constant(i) for i in _options(need)] for need in api.inputs],
             "outputs": [item_constant(i) for i in api.outputs]}
            for name, api in domain.apis.items()]
    return render("flow_domain.pddl.j2", name=domain.name, generator=GENERATOR,
                  api_constants=[a["constant"] for a in apis], items=items, apis=apis)


def make_flow_pack(root: Path, domain: FlowDomain, source: str) -> dict[str, Path]:
    """Check the spec, then write the pack (pack.yaml, generic rules, flow domain PDDL, prompt)."""
    from pipeline.packgen import generic_rules, write_pack

    check_flow_domain(domain)
    spec = flow_pack_spec(domain)
    return write_pack(root, spec, generic_rules(domain.name, [], GENERATOR), flow_domain_pddl(domain),
                      header=f"{domain.name}: generated by `nesyplan {GENERATOR}` from {source}; "
                             "edit the spec, not this file.")


# --- FlowAgent-style PDL -----------------------------------------------------------------------------

class PdlNode(BaseModel):
    name: str
    description: str = ""
    precondition: list[str] = []   # nodes that must come first
    request: list[str] = []        # API nodes: the slots / responses the call takes
    response: list[str] = []       # API nodes: what the call returns


class PdlWorkflow(BaseModel):
    """A FlowAgent-style workflow: meta information, SLOT / API / ANSWER nodes with preconditions, and the
    procedure in words (kept in the pack's description for the reader)."""
    domain: str
    name: str
    description: str = ""
    examples: list[str] = []
    slots: list[PdlNode] = []
    apis: list[PdlNode] = []
    answers: list[PdlNode] = []
    procedure: str = ""


def _camel(name: str) -> str:
    return "".join(part.capitalize() for part in re.split(r"[_\s]+", name) if part)


def compile_pdl(workflow: PdlWorkflow) -> FlowDomain:
    """The workflow as a one-intent flow domain. A SLOT node becomes an API that asks the user for the
    slot (`Ask<Slot>`, output: the slot); an API node an API over its request items; an ANSWER node an
    API that tells the user. Every node also outputs `<node>_done`, which the nodes naming it as a
    precondition take as an input. The flow's steps are the layers of the precondition graph (a node's
    step is one after the latest of its preconditions, data included), so the planner keeps the order."""
    nodes: dict[str, tuple[str, PdlNode]] = {}
    for kind, group in (("slot", workflow.slots), ("api", workflow.apis), ("answer", workflow.answers)):
        for node in group:
            if node.name in nodes:
                raise FlowSpecError(f"workflow {workflow.name!r}: node {node.name!r} is defined twice")
            nodes[node.name] = (kind, node)
    made = {node.name: node.name for _, node in nodes.values() if _ == "slot"}
    for kind, node in nodes.values():
        for item in node.response:
            made[item] = node.name
    graph: dict[str, set[str]] = {}
    for name, (kind, node) in nodes.items():
        unknown = [p for p in node.precondition if p not in nodes]
        if unknown:
            raise FlowSpecError(f"workflow {workflow.name!r}: node {name!r} has unknown precondition(s) {unknown}")
        missing = [r for r in node.request if r not in made]
        if missing:
            raise FlowSpecError(f"workflow {workflow.name!r}: node {name!r} requests {missing}, which no slot "
                                "or API response gives")
        graph[name] = set(node.precondition) | {made[r] for r in node.request}
    try:
        order = list(graphlib.TopologicalSorter(graph).static_order())
    except graphlib.CycleError as exc:
        raise FlowSpecError(f"workflow {workflow.name!r}: the node preconditions form a cycle "
                            f"({' -> '.join(exc.args[1])})") from None
    layer: dict[str, int] = {}
    for name in order:
        layer[name] = 1 + max((layer[p] for p in graph[name]), default=-1)
    api_name = {name: (f"Ask{_camel(name)}" if kind == "slot" else _camel(name)) for name, (kind, _) in nodes.items()}
    apis = {}
    for name, (kind, node) in nodes.items():
        outputs = ([name] if kind == "slot" else list(node.response)) + [f"{name}_done"]
        inputs = list(node.request) + [f"{p}_done" for p in node.precondition]
        what = {"slot": f"asks the user for {name.replace('_', ' ')}", "answer": "tells the user"}.get(kind, "calls")
        apis[api_name[name]] = FlowApi(inputs=inputs, outputs=outputs,
                                       description=node.description or f"{what} ({name})")
    steps = []
    for number in range(max(layer.values(), default=-1) + 1):
        members = [n for n in order if layer[n] == number]
        text = "; ".join(nodes[n][1].description or n.replace("_", " ") for n in members)
        steps.append(FlowStep(step=text, apis=[api_name[n] for n in members]))
    domain = FlowDomain(name=workflow.domain, description=(workflow.description + "\n" + workflow.procedure).strip(),
                        apis=apis, intents={workflow.name: steps},
                        intent_info={workflow.name: IntentInfo(description=workflow.description,
                                                               examples=workflow.examples)})
    check_flow_domain(domain)
    return domain


def load_any_spec(path: Path, info_path: Path | None = None) -> list[FlowDomain]:
    """A flows spec (`domains:`) or one PDL workflow (`slots:`/`apis:`/`answers:`)."""
    try:
        raw = yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as exc:
        raise FlowSpecError(f"{path}: invalid YAML: {exc}") from None
    if not isinstance(raw, dict):
        raise FlowSpecError(f"{path}: expected a mapping at the top level")
    if "domains" in raw:
        return load_flow_domains(path, info_path)
    try:
        return [compile_pdl(PdlWorkflow.model_validate(raw))]
    except ValidationError as exc:
        raise FlowSpecError(f"{path}: not a flows spec (`domains:`) nor a PDL workflow: {exc}") from None
