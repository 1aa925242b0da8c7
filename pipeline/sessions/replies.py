"""What the agent says: the templates of `replies.yaml`, one per situation, filled in by `say`. The code
decides what happens; the words it is said in are data, reviewed and reworded without touching code.

>>> say("ask", argument="party size")
'Please tell me the party size.'
>>> listed(["cash", "card", "transfer"], "either"), listed(["the date 2026-03-01"], "both"), listed([], "both")
('cash, card or transfer', 'the date 2026-03-01', '')
>>> value_form("email"), value_form("choice")
('an email address', None)
"""

from __future__ import annotations

import string
from functools import lru_cache
from pathlib import Path

import yaml

REPLIES = Path(__file__).with_name("replies.yaml")


@lru_cache(maxsize=1)
def templates() -> dict[str, str]:
    """The templates by situation (`value_forms` aside), read once and checked: a template that does not
    parse fails here, not in a conversation."""
    raw = yaml.safe_load(REPLIES.read_text(encoding="utf-8"))
    found = {name: text for name, text in raw.items() if name != "value_forms"}
    for name, text in found.items():
        if not isinstance(text, str):
            raise ValueError(f"{REPLIES.name}: `{name}` must be one string")
        list(string.Formatter().parse(text))  # an unbalanced brace fails here
    return found


@lru_cache(maxsize=1)
def _value_forms() -> dict[str, str]:
    return dict(yaml.safe_load(REPLIES.read_text(encoding="utf-8")).get("value_forms") or {})


def fields(name: str) -> set[str]:
    """The fields a template takes."""
    return {field for _, field, _, _ in string.Formatter().parse(templates()[name]) if field}


def say(name: str, **values: object) -> str:
    """The template `name` with its fields filled in; a field the template has and the code did not give is a
    bug, and fails."""
    return templates()[name].format(**values)


def listed(items: list[str], join: str) -> str:
    """Items in a sentence: "a, b or c" (`join`: "either"), "a, b and c" ("both"); one alone; none empty."""
    if len(items) < 2:
        return items[0] if items else ""
    return say(join, rest=", ".join(items[:-1]), last=items[-1])


def value_form(normalizer: str | None) -> str | None:
    """What a value of the normaliser looks like ("a day, such as June 12"), where one is written."""
    return _value_forms().get(normalizer or "")
