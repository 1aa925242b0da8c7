"""Conversation moves: what a session message does besides giving values (yes, no, cancel, a person, I
don't know), read from general English word lists in `lexicon/moves.yaml`.

The lists hold no domain words; which moves count where is the session engine's decision (a yes only
answers a read-back; a cancel only stands when the message asks for no goal of the pack).

>>> read_moves("Yes, go ahead please.")
Moves(found=frozenset({'affirm'}), bare=True, rest='')
>>> moves = read_moves("No, that's not right. It's for 5 people")
>>> moves.found == {"deny"}, moves.rest
(True, "It's for 5 people")
>>> sorted(read_moves("I'm not sure, can I talk to a person?").found)
['dont_know', 'human']
>>> read_moves("nothing to see here").found
frozenset()
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

import yaml

MOVES = ("affirm", "deny", "cancel", "human", "dont_know")


@dataclass(frozen=True)
class Moves:
    found: frozenset[str]
    bare: bool = False  # a yes and nothing more: the message gives nothing to read for values
    rest: str = ""      # the message after its leading yes or no (and what may follow one), as written


_WORD = re.compile(r"[A-Za-z0-9'\u2019]+")


def _plain(text: str) -> str:
    return " ".join(w.lower().replace("\u2019", "'") for w in _WORD.findall(text))


def _after_words(message: str, count: int) -> str:
    """The message as written after its first `count` words."""
    words = list(_WORD.finditer(message))
    return message[words[count].start():].strip() if count < len(words) else ""


@lru_cache(maxsize=1)
def lexicon() -> dict[str, dict[str, list[str]]]:
    raw = yaml.safe_load(resources.files("pipeline.language").joinpath("lexicon/moves.yaml").read_text("utf-8"))
    unknown = set(raw) - set(MOVES)
    if unknown:
        raise ValueError(f"lexicon/moves.yaml: unknown move(s) {sorted(unknown)}; known: {', '.join(MOVES)}")
    return {move: {kind: [_plain(p) for p in phrases] for kind, phrases in entry.items()}
            for move, entry in raw.items()}


def _starts(text: str, phrases: list[str]) -> str | None:
    """The longest phrase the text begins with (whole words), or None."""
    hits = [p for p in phrases if text == p or text.startswith(p + " ")]
    return max(hits, key=len) if hits else None


def _holds(text: str, phrases: list[str]) -> bool:
    padded = f" {text} "
    return any(f" {p} " in padded for p in phrases)


# Words that carry nothing around a move: "I'm sorry, I really don't know" is a move and no value.
_FILLER = {"i", "i'm", "im", "sorry", "um", "uh", "well", "really", "honestly", "just", "actually", "it", "that",
           "please", "oh", "hmm", "so", "but", "the", "a"}


def only_moves(text: str, names) -> bool:
    """Whether words are nothing but these moves' phrases and fillers: read as a free value ("Don't Know" as
    a name), they are the move, not the value.

    >>> only_moves("I don't know", {"dont_know"}), only_moves("I don't know, maybe Rex", {"dont_know"})
    (True, False)
    """
    padded = f" {_plain(text)} "
    for name in names:
        entry = lexicon().get(name, {})
        for phrase in sorted({p for phrases in entry.values() for p in phrases}, key=len, reverse=True):
            padded = padded.replace(f" {phrase} ", " ")
    return bool(names) and not set(padded.split()) - _FILLER


def read_moves(message: str) -> Moves:
    """The moves a message makes, and whether it is a bare yes (nothing after the yes but fillers)."""
    text = _plain(message)
    found = {move for move, entry in lexicon().items()
             if _starts(text, entry.get("starts", [])) or _holds(text, entry.get("anywhere", []))}
    if "affirm" in found and "deny" in found:  # "no, that's right" reads as neither: the words decide
        found -= {"affirm", "deny"}
    lead = next((m for m in ("affirm", "deny") if m in found), None)
    if lead is None:
        return Moves(found=frozenset(found), rest=message.strip())
    entry, rest = lexicon()[lead], text
    phrases = entry["starts"] + entry.get("fillers", []) + lexicon()["affirm"].get("fillers", [])
    while rest:
        phrase = _starts(rest, phrases)
        if phrase is None:
            break
        rest = rest[len(phrase):].strip()
    skipped = len(text.split()) - len(rest.split())
    return Moves(found=frozenset(found), bare=lead == "affirm" and not rest, rest=_after_words(message, skipped))
