"""Writing a generated pack: pack.yaml, its rules, its domain PDDL and its prompt template, each from a
jinja2 template in `pipeline/authoring/templates/`, into the packs root's `domains/`, `asp_rules/`, `pddl/`.

Two generators use it: the scale benchmark's catalog (`scale_pack.py`, goals that each call one API) and
flow packs (`flow_packs.py`, an intent's flow of APIs).
"""

from __future__ import annotations

import shutil
import tempfile
from functools import lru_cache
from pathlib import Path

import jinja2
import yaml

from pipeline.stages.compile import wants_predicate

TEMPLATES = Path(__file__).with_name("templates")


@lru_cache(maxsize=1)
def _env() -> jinja2.Environment:
    return jinja2.Environment(loader=jinja2.FileSystemLoader(str(TEMPLATES)), undefined=jinja2.StrictUndefined,
                              autoescape=False, keep_trailing_newline=True, trim_blocks=False)


def render(template: str, **context) -> str:
    return _env().get_template(template).render(**context)


def pack_paths(root: Path, name: str) -> dict[str, Path]:
    return {"yaml": root / "domains" / name / "pack.yaml",
            "prompt": root / "domains" / name / "prompts" / "translate.j2",
            "rules": root / "asp_rules" / name,
            "pddl": root / "pddl" / name / "domain.pddl"}


# What the generic rules' error atoms tell the user (templates/pack/*.lp.j2 raise them).
GENERIC_ERRORS = {
    "conflicting_values": "the request gives two different values for one argument",
    "unknown_goal": "the IR names a goal this domain does not have",
    "two_goals_for_one_id": "the IR gives one goal id two goals",
    "argument_without_goal": "the IR gives an argument to a goal id it never declared",
    "argument_not_taken": "the IR gives a goal an argument its API does not take",
    "refers_to_itself": "an argument refers to the output of its own goal",
    "output_not_accepted": "an argument refers to an output of a kind it cannot take",
}


def _dump_yaml(spec: dict, header: str) -> str:
    body = yaml.safe_dump(spec, sort_keys=False, allow_unicode=True, width=110)
    return "".join(f"# {line}\n" for line in header.splitlines()) + body


def write_pack(root: Path, spec: dict, rules: dict[str, str], domain_pddl: str, header: str) -> dict[str, Path]:
    """Write every file of a pack; the rules folder is replaced whole (no stale rule file survives)."""
    paths = pack_paths(root, spec["name"])
    for key in ("yaml", "prompt", "pddl"):
        paths[key].parent.mkdir(parents=True, exist_ok=True)
    paths["yaml"].write_text(_dump_yaml(spec, header), encoding="utf-8")
    shutil.copyfile(TEMPLATES / "translate.j2", paths["prompt"])
    if paths["rules"].exists():
        shutil.rmtree(paths["rules"])
    paths["rules"].mkdir(parents=True)
    for file, text in rules.items():
        (paths["rules"] / file).write_text(text, encoding="utf-8")
    paths["pddl"].write_text(domain_pddl, encoding="utf-8")
    return paths


def generic_rules(name: str, arguments: list[str], generator: str) -> dict[str, str]:
    """The rule files every generated pack shares: IR -> goals and arguments, normalisation, constraints."""
    return {f"{part}.lp": render(f"{part}.lp.j2", name=name, generator=generator, arguments=arguments)
            for part in ("ir_to_domain", "normalize", "constraints")}


def typed_call_pack_files(spec: dict, generator: str) -> tuple[dict[str, str], str]:
    """A call pack whose arguments each have their own normaliser (typed PDL, SGD): the call pack's files,
    with day arguments read against `today` (a `future_date` as the coming day)."""
    rules, pddl = call_pack_files(spec, generator)

    def typed(normalizer: str) -> list[str]:
        return [name for name, a in spec["arguments"].items() if a["normalizer"] == normalizer]

    rules["normalize.lp"] = render("normalize.lp.j2", name=spec["name"], generator=generator,
                                   arguments=list(spec["arguments"]), date_arguments=typed("date"),
                                   future_date_arguments=typed("future_date"), date_time_arguments=typed("date_time"))
    return rules, pddl


def call_pack_files(spec: dict, generator: str) -> tuple[dict[str, str], str]:
    """Rules and domain PDDL of a pack whose goals each call one API (the quickbooks shape)."""
    name = spec["name"]
    arguments = list(spec.get("arguments", {}))
    rules = generic_rules(name, arguments, generator)
    apis = [{"name": api, "wants": wants_predicate(api), "arguments": a.get("arguments", [])}
            for api, a in spec["apis"].items()]
    pddl = render("domain.pddl.j2", name=name, generator=generator, argtypes=arguments, apis=apis,
                  max_arity=max([len(a["arguments"]) for a in apis] + [0]))
    return rules, pddl


class PackNotValid(Exception):
    """A generated pack that `nesyplan validate` refuses; nothing of it was written."""

    def __init__(self, name: str, problems: list):
        self.name, self.problems = name, problems
        listed = "; ".join(str(p) for p in problems[:5]) + (f" (and {len(problems) - 5} more)" if len(problems) > 5 else "")
        super().__init__(f"{name}: the generated pack does not validate: {listed}")


def write_validated_pack(root: Path, spec: dict, rules: dict[str, str], domain_pddl: str, header: str) -> dict[str, Path]:
    """Write the pack into a scratch packs root, run `validate` there, and only then write it under `root`:
    a generator never leaves a pack that fails at `plan` time."""
    from pipeline.authoring.validate import validate_pack
    from pipeline.packs.pack import using_packs_root

    with tempfile.TemporaryDirectory(prefix="nesyplan-pack-") as scratch:
        write_pack(Path(scratch), spec, rules, domain_pddl, header)
        with using_packs_root(Path(scratch)):
            problems = validate_pack(spec["name"])
        for problem in problems:  # point at the file the pack will have, not the scratch copy
            problem.file = problem.file.replace(scratch, str(root))
    if problems:
        raise PackNotValid(spec["name"], problems)
    return write_pack(root, spec, rules, domain_pddl, header)
