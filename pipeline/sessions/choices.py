"""Choosing among the things a lookup found: where a list or a search that feeds a call with effects finds
several things, the agent shows them and the user says which one ("the second", its id, or its name); the
call then runs on that one, and the read-back names it.

>>> from pipeline.sessions.records import Candidate
>>> found = [Candidate(id="12", label="Blue Lamp"), Candidate(id="40", label="Desk Lamp"), Candidate(id="7", label="")]
>>> [chosen_among(m, found) for m in ("the second one", "40", "number 3", "the desk lamp please", "the last", "#12")]
[1, 1, 2, 1, 2, 0]
>>> chosen_among("a lamp", found), chosen_among("something else", found)
(None, None)
>>> choice_question("product", found)
'I found 3 products: 1) Blue Lamp (id 12); 2) Desk Lamp (id 40); 3) id 7. Which one? Say its number in the list, its id or its name.'
"""

from __future__ import annotations

import re

from pipeline.language.words import FUNCTION_WORDS, word_lists
from pipeline.sessions.records import Candidate
from pipeline.sessions.replies import say
from pipeline.values.normalizers import _stem

_PLACES = word_lists("ordinals")
_WORD = re.compile(r"[#\w][\w.:-]*")


def chosen_among(message: str, candidates: list[Candidate]) -> int | None:
    """Which candidate the message picks (its place in the list, from 0): an id written as one of theirs
    first, then a place ("the second", "3", "number 3", "the last"), then the one whose name the message's
    words say and no other's; None where it picks none or more than one."""
    words = [w.lstrip("#").rstrip(".:-").lower() for w in _WORD.findall(message)]
    by_id = [i for i, c in enumerate(candidates) if c.id.lower() in words]
    if len(by_id) == 1:
        return by_id[0]
    places = {int(w) - 1 for w in words if w.isdigit() and 0 < int(w) <= len(candidates)}
    places |= {(len(candidates) if place == "last" else int(place)) - 1 for place, said in _PLACES.items()
               if set(words) & said and (place == "last" or int(place) <= len(candidates))}
    if len(places) == 1:
        return places.pop()
    said = {_stem(w) for w in words if w not in FUNCTION_WORDS}
    named = [i for i, c in enumerate(candidates)
             if (own := {_stem(w) for w in re.findall(r"\w+", c.label.lower()) if w not in FUNCTION_WORDS})
             and own <= said]
    return named[0] if len(named) == 1 else None


def choice_question(resource: str, candidates: list[Candidate]) -> str:
    """The things found, numbered, and the question which one."""
    shown = "; ".join(say("candidate", number=i, label=c.label, id=c.id) if c.label
                      else say("candidate_without_label", number=i, id=c.id) for i, c in enumerate(candidates, 1))
    return say("choose", count=len(candidates), resource=resource, shown=shown)
