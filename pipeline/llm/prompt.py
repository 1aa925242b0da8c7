"""The translation prompt, rendered with jinja2 from the pack's own template and domain-independent
in-context examples (`pipeline/fewshot.yaml`)."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import jinja2
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
    takes = pack.spec.apis[pack.spec.goals[goal].api].arguments
    extras = [f"_{name}" for name, extra in pack.spec.ir_extra.items() if set(extra.gives) <= set(takes)]
    return extras + [f"_{a}" for a in takes]


def render_system_prompt(pack: Pack, shortlist: list[str] | None = None) -> str:
    """The static part of the prompt: instructions, the pack's goals and arguments, the examples."""
    path = template_path(pack)
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(path.parent)), undefined=jinja2.StrictUndefined,
                             autoescape=False, trim_blocks=False)
    goals = {g: spec for g, spec in pack.spec.goals.items() if not shortlist or g in shortlist}
    arguments = {a: spec for a, spec in pack.spec.arguments.items()
                 if any(f"_{a}" in goal_arguments(pack, g) for g in goals)}
    extras = {f"{name}": extra for name, extra in pack.spec.ir_extra.items()
              if any(f"_{name}" in goal_arguments(pack, g) for g in goals)}
    return env.get_template(path.name).render(
        goals=goals, goal_arguments={g: goal_arguments(pack, g) for g in goals},
        arguments={**{k: v for k, v in extras.items()}, **arguments},
        fewshot=fewshot(), none_line=NONE_LINE).strip() + "\n"


def render_user_message(query: str) -> str:
    return f"Request: {query.strip()}\nFacts:"
