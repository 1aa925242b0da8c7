"""The words a pack's goal or argument is known by: what the learned heads compare a text with.

The same function reads a loaded pack and a schema being turned into one, so what is trained on is what
is scored at run time. Names are split into words ("number_of_seats" -> "number of seats").

>>> goal_text("find_restaurants", "Find a place to eat", ["city", "cuisine"])
'find restaurants: Find a place to eat (city, cuisine)'
>>> argument_text("number_of_seats", "How many seats to book")
'number of seats: How many seats to book'
>>> words_of("FindRestaurants") == words_of("find_restaurants")
True
"""

from __future__ import annotations

import re


def words_of(name: str) -> str:
    """A name as words, however it is written ("FindRestaurants", "find_restaurants": "find restaurants")."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", name).replace("_", " ")
    return re.sub(r"\s+", " ", spaced).strip().lower()


def goal_text(name: str, description: str, arguments: list[str]) -> str:
    args = ", ".join(words_of(a) for a in arguments)
    return f"{words_of(name)}: {description.strip() or words_of(name)}" + (f" ({args})" if args else "")


def argument_text(name: str, description: str) -> str:
    return f"{words_of(name)}: {description.strip() or words_of(name)}"


def pack_goal_texts(pack) -> dict[str, str]:
    """goal -> its text, for every goal a request may name."""
    return {g: goal_text(g, pack.spec.goals[g].description, pack.goal_takes(g)) for g in pack.requestable_goals()}


def pack_argument_texts(pack) -> dict[str, str]:
    """argument (and period-like IR predicate) -> its text."""
    texts = {a: argument_text(a, spec.description) for a, spec in pack.spec.arguments.items()}
    texts.update({e: argument_text(e, spec.description) for e, spec in pack.spec.ir_extra.items()})
    return texts
