"""Generating flow packs (FLAP, FlowAgent): a flows spec or a PDL workflow -> pack.yaml, generic rules, and
a domain PDDL in which every API runs only in a flow step that lists it, once, after its inputs exist.
So the planner cannot return a plan that breaks the flow or the data.
"""

from __future__ import annotations

import graphlib
import re
from pathlib import Path

import yaml
from pydantic import ValidationError

from pipeline.authoring.writer import GENERIC_ERRORS, generic_rules, render, write_validated_pack
from pipeline.packs.pack import StrictModel, key_lines, line_of, model_keys, validation_problems
from pipeline.packs.flows import (FlowApi, FlowDomain, FlowSpecError, FlowStep, IntentInfo, api_constant,
                                  check_flow_domain, input_options, item_constant)

# --- reading a flows spec ---------------------------------------------------------------------------


def load_flow_domains(path: Path, info_path: Path | None = None) -> list[FlowDomain]:
    """Read `domains:` from a flows spec (and, optionally, intent descriptions and example requests
    from a second file with the same `domains: {name: {intents: {intent: {description, examples}}}}`)."""
    text = Path(path).read_text(encoding="utf-8")
    raw, lines = yaml.safe_load(text) or {}, key_lines(yaml.compose(text))
    info = (yaml.safe_load(Path(info_path).read_text(encoding="utf-8")) or {}) if info_path else {}
    domains = []
    for name, body in (raw.get("domains") or {}).items():
        extra = ((info.get("domains") or {}).get(name) or {})
        unknown = sorted(set(body or {}) - {"apis", "intents"})
        if unknown:
            raise FlowSpecError(f"{path}:{line_of(lines, f'domains.{name}.{unknown[0]}')}: domains.{name}."
                                f"{unknown[0]}: unknown key (a domain has apis and intents)")
        try:
            domains.append(FlowDomain(name=name, description=extra.get("description", ""),
                                      apis=body.get("apis") or {}, intents=body.get("intents") or {},
                                      intent_info=extra.get("intents") or {}))
        except ValidationError as exc:
            problems = validation_problems(exc, {k.removeprefix(f"domains.{name}."): v for k, v in lines.items()},
                                           model_keys(FlowApi, FlowStep, IntentInfo))
            raise FlowSpecError("\n".join(f"{path}:{line}: domain {name!r}: {message}"
                                          for line, message in problems)) from None
    return domains


# --- generating the pack -----------------------------------------------------------------------------

GENERATOR = "make-flow-packs"


def intent_document(domain: FlowDomain, intent: str) -> str:
    """A description for an intent the spec leaves undescribed: its name and its steps."""
    steps = "; ".join(step.step for step in domain.intents[intent])
    return f"{intent.replace('_', ' ').capitalize()}. Steps: {steps}."


def flow_pack_spec(domain: FlowDomain) -> dict:
    """pack.yaml for a flow domain: one goal per intent (no arguments: the flow gathers what it needs),
    the flows and API specs under `flow:` for the compiler, the plan reader and the validator."""
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
    items = sorted({item_constant(i) for a in domain.apis.values() for i in a.outputs} |
                   {item_constant(i) for a in domain.apis.values() for need in a.inputs for i in input_options(need)})
    apis = [{"name": name, "constant": api_constant(name), "description": api.description,
             "inputs": [[item_constant(i) for i in input_options(need)] for need in api.inputs],
             "outputs": [item_constant(i) for i in api.outputs]}
            for name, api in domain.apis.items()]
    return render("flow_domain.pddl.j2", name=domain.name, generator=GENERATOR,
                  api_constants=[a["constant"] for a in apis], items=items, apis=apis)


def make_flow_pack(root: Path, domain: FlowDomain, source: str) -> dict[str, Path]:
    """Check the spec, then write the pack (pack.yaml, generic rules, flow domain PDDL, prompt)."""
    check_flow_domain(domain)
    spec = flow_pack_spec(domain)
    return write_validated_pack(root, spec, generic_rules(domain.name, [], GENERATOR), flow_domain_pddl(domain),
                      header=f"{domain.name}: generated by `nesyplan {GENERATOR}` from {source}; "
                             "edit the spec, not this file.")


# --- FlowAgent-style PDL -----------------------------------------------------------------------------

class PdlNode(StrictModel):
    name: str
    description: str = ""
    question: str | None = None    # SLOT nodes: what the agent asks (else a sentence from the description)
    type: str | None = None        # SLOT nodes: the normaliser that reads its value (typed PDL slots)
    values: list[str] = []         # SLOT nodes of type `choice`: the values, and their synonyms
    synonyms: dict[str, list[str]] = {}
    precondition: list[str] = []   # nodes that must come first
    request: list[str] = []        # API nodes: the slots / responses the call takes
    response: list[str] = []       # API nodes: what the call returns
    http: dict | None = None       # API nodes: how the `http` executor calls it (packs.pack.HttpBinding)
    effects: bool = False          # API nodes: it changes the world (confirmed before it runs)


class PdlWorkflow(StrictModel):
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
    out_of_scope: list[str] = []   # near requests the workflow does not serve (a flight, a loan)
    http_base_url: str | None = None  # where its APIs are served, for the `http` executor


def load_pdl_workflow(path: Path) -> tuple[PdlWorkflow, dict[str, int]]:
    """A typed PDL workflow file, read strictly: an unknown key, a wrong type or a missing field is a
    FlowSpecError of `file:line: key: message` lines (with the closest key for a typo). Also returns the
    spec's key lines, for errors found later (`located`)."""
    text = Path(path).read_text(encoding="utf-8")
    try:
        lines = key_lines(yaml.compose(text))
        raw = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise FlowSpecError(f"{path}:{mark.line + 1 if mark else 1}: invalid YAML: {exc}") from None
    if not isinstance(raw, dict):
        raise FlowSpecError(f"{path}:1: a PDL workflow is a mapping (domain, name, slots, apis, ...)")
    try:
        return PdlWorkflow.model_validate(raw), lines
    except ValidationError as exc:
        problems = validation_problems(exc, lines, model_keys(PdlWorkflow, PdlNode))
        raise FlowSpecError("\n".join(f"{path}:{line}: {message}" for line, message in problems)) from None


def located(exc: FlowSpecError, path: Path, lines: dict[str, int]) -> FlowSpecError:
    """The error with the file and line of the key it is about."""
    return FlowSpecError(f"{path}:{line_of(lines, exc.key) if exc.key else 1}: {exc}", exc.key)


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
