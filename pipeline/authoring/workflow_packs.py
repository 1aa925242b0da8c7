"""A typed PDL workflow as a call pack for conversations: one workflow goal that gives the workflow's slots
(each read by the normaliser its `type:` names), and one internal goal per API. The workflow goal's IR is
expanded into the API calls (`packs/workflows.py`), so the planner orders them by their data and asks for
each missing slot; a session replans after every message.

Unlike a flow pack (`flow_packs.py`), whose plan walks the workflow's SLOT nodes as steps, here a slot is
an argument: an opening message that gives it ("a table for 4 at 8pm") is never asked for it again.
"""

from __future__ import annotations

import re
from pathlib import Path

from pipeline.authoring.flow_packs import PdlWorkflow, load_pdl_workflow, located
from pipeline.authoring.writer import GENERIC_ERRORS, typed_call_pack_files, write_validated_pack
from pipeline.packs.flows import FlowSpecError
from pipeline.packs.pack import NAME, did_you_mean
from pipeline.values.normalizers import NORMALIZERS

GENERATOR = "make-workflow-packs"
SLOT_TYPES = sorted(set(NORMALIZERS))


def _order(workflow: PdlWorkflow) -> list[str]:
    """The APIs in an order where each comes after the APIs whose output it takes and its preconditions."""
    produced_by = {item: api.name for api in workflow.apis for item in api.response}
    after = {api.name: {produced_by[i] for i in api.request if i in produced_by} | set(api.precondition)
             for api in workflow.apis}
    order: list[str] = []
    while len(order) < len(after):
        ready = [name for name, needs in after.items() if name not in order and needs <= set(order)]
        if not ready:
            raise FlowSpecError(f"{workflow.domain}: the APIs' data or preconditions form a cycle")
        order.append(ready[0])
    return order


def _check_names(workflow: PdlWorkflow) -> None:
    """Names are checked where they are written, never left to fail in clingo or the planner."""
    if not NAME.fullmatch(workflow.domain):
        raise FlowSpecError(f"domain {workflow.domain!r} is not a pack name (lower case letters, digits and _: "
                            f"{re.sub(r'[^a-z0-9_]+', '_', workflow.domain.lower())!r} would do)", "domain")
    if not NAME.fullmatch(workflow.name):
        raise FlowSpecError(f"{workflow.domain}: workflow name {workflow.name!r} is not a goal name (lower case "
                            f"letters, digits and _)", "name")
    for group, nodes in (("slots", workflow.slots), ("apis", workflow.apis), ("answers", workflow.answers)):
        for i, node in enumerate(nodes):
            if not NAME.fullmatch(node.name):
                raise FlowSpecError(f"{workflow.domain}: {group[:-1]} name {node.name!r} is not lower case letters, "
                                    f"digits and _", f"{group}.{i}.name")


def workflow_pack_spec(workflow: PdlWorkflow) -> dict:
    _check_names(workflow)
    slots = {slot.name: slot for slot in workflow.slots}
    for i, slot in enumerate(workflow.slots):
        if slot.type is None:
            raise FlowSpecError(f"{workflow.domain}: slot {slot.name} needs a `type:` ({', '.join(SLOT_TYPES)})",
                                f"slots.{i}")
        if slot.type not in NORMALIZERS:
            raise FlowSpecError(f"{workflow.domain}: slot {slot.name}: unknown type {slot.type!r}"
                                f"{did_you_mean(slot.type, SLOT_TYPES)} (known: {', '.join(SLOT_TYPES)})", f"slots.{i}.type")
    produced_by = {item: api.name for api in workflow.apis for item in api.response}
    api_names = [api.name for api in workflow.apis]
    for i, api in enumerate(workflow.apis):
        if len(api.response) != 1:
            raise FlowSpecError(f"{workflow.domain}: API {api.name} must return one item, not {api.response}",
                                f"apis.{i}.response")
        unknown = [i for i in api.request if i not in slots and i not in produced_by]
        if unknown:
            raise FlowSpecError(f"{workflow.domain}: API {api.name} takes {', '.join(unknown)}, which no slot "
                                f"gives and no API returns{did_you_mean(unknown[0], [*slots, *produced_by])}",
                                f"apis.{i}.request")
        for before in api.precondition:
            if before not in api_names:
                raise FlowSpecError(f"{workflow.domain}: API {api.name} has precondition {before!r}, which is no "
                                    f"API of the workflow{did_you_mean(before, api_names)}", f"apis.{i}.precondition")
    order = _order(workflow)
    api_names = {api.name for api in workflow.apis}
    apis = {api.name: {"arguments": list(api.request), "produces": api.response[0], "description": api.description,
                       **({"after": [n for n in api.precondition if n in api_names]} if api.precondition else {}),
                       **({"effects": True} if api.effects else {}),
                       **({"http": api.http} if api.http else {})}
            for api in workflow.apis}
    arguments = {}
    for name, slot in slots.items():
        argument = {"description": slot.description or name.replace("_", " "), "normalizer": slot.type,
                    **({"question": slot.question} if slot.question else {})}
        if slot.values:
            argument.update(values=slot.values, synonyms=slot.synonyms)
        arguments[name] = argument
    taken = {item for api in workflow.apis for item in api.request}
    for item, api in produced_by.items():
        if item not in taken:
            continue
        arguments[item] = {"description": f"what {api} returns", "normalizer": "lowercase_text",
                           "accepts_output": [item]}
    goals = {workflow.name: {"api": order[-1], "description": workflow.description, "examples": workflow.examples,
                             "workflow": order}}
    for api in workflow.apis:
        goals[f"step_{api.name}"] = {"api": api.name, "description": api.description, "internal": True}
    return {"name": workflow.domain, "description": (workflow.description + "\n" + workflow.procedure).strip(),
            "max_goals": 1, "out_of_scope": workflow.out_of_scope, "goals": goals, "apis": apis, "arguments": arguments,
            "errors": dict(GENERIC_ERRORS), **({"http_base_url": workflow.http_base_url} if workflow.http_base_url else {})}


def read_workflow(path: Path) -> PdlWorkflow:
    """A typed PDL workflow file, read strictly and checked, every problem as `file:line: ...`."""
    workflow, lines = load_pdl_workflow(path)
    try:
        workflow_pack_spec(workflow)
    except FlowSpecError as exc:
        raise located(exc, path, lines) from None
    return workflow


def make_workflow_pack(root: Path, workflow: PdlWorkflow, source: str) -> dict[str, Path]:
    spec = workflow_pack_spec(workflow)
    rules, pddl = typed_call_pack_files(spec, GENERATOR)
    return write_validated_pack(root, spec, rules, pddl, header=f"{spec['name']}: generated by `nesyplan {GENERATOR}` from "
                                                       f"{source}; edit the spec, not this file.")
