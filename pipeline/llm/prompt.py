"""The translation prompt, rendered with jinja2 from the pack's own template and domain-independent
in-context examples (`pipeline/fewshot.yaml`)."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import jinja2
from jinja2.sandbox import ImmutableSandboxedEnvironment
import yaml

from pipeline.llm.grammar import NONE_LINE
from pipeline.packs.pack import Pack

FEWSHOT_FILE = Path(__file__).with_name("fewshot.yaml")
TEMPLATE_NAME = "translate.j2"


@lru_cache(maxsize=1)
def fewshot() -> dict:
    return yaml.safe_load(FEWSHOT_FILE.read_text(encoding="utf-8"))


def template_path(pack: Pack) -> Path:
    return pack.yaml_path.parent / "prompts" / TEMPLATE_NAME


def goal_arguments(pack: Pack, goal: str) -> list[str]:
    """The IR predicates a goal takes: a `gives` predicate (e.g. `_period`) first, then its API's arguments."""
    takes = pack.goal_takes(goal)
    extras = [f"_{name}" for name, extra in pack.spec.ir_extra.items() if set(extra.gives) <= set(takes)]
    return extras + [f"_{a}" for a in takes]


def render_system_prompt(pack: Pack, shortlist: list[str] | None = None) -> str:
    """The static part of the prompt: instructions, the pack's goals and arguments, the examples."""
    path = template_path(pack)
    # A pack's template may come from an upload: rendered in the sandbox, it reads the values it is given
    # and reaches nothing of Python's behind them.
    env = ImmutableSandboxedEnvironment(loader=jinja2.FileSystemLoader(str(path.parent)),
                                        undefined=jinja2.StrictUndefined, autoescape=False, trim_blocks=False)
    goals = {g: pack.spec.goals[g] for g in pack.requestable_goals() if not shortlist or g in shortlist}
    specs = {**pack.spec.ir_extra, **pack.spec.arguments}
    # Each argument is described under the first goal that takes it, so a goal's block reads the same in
    # every prompt that opens with that goal (and the model state of that text is reused).
    described: set[str] = set()
    new_arguments: dict[str, dict] = {}
    for goal in goals:
        names = [a.removeprefix("_") for a in goal_arguments(pack, goal) if a.removeprefix("_") not in described]
        new_arguments[goal] = {name: specs[name] for name in names}
        described.update(names)
    return env.get_template(path.name).render(
        goals=goals, goal_arguments={g: goal_arguments(pack, g) for g in goals}, new_arguments=new_arguments,
        fewshot=fewshot(), none_line=NONE_LINE).strip() + "\n"


def render_user_message(query: str) -> str:
    return f"Request: {query.strip()}\nFacts:"
