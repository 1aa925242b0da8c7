"""The lexicon's files read as data, for the value readers: English lives in `pipeline/language/lexicon/`
(one home for it), and `values` sits below `language` in the layers, so the files are read by their path and
nothing above this package is imported.

>>> "ago" in words_of("dates", "back_from_now")
True
>>> re.fullmatch(alternation(["this", "this coming"]), "this coming") is not None
True
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

import yaml

LEXICON = Path(__file__).resolve().parents[1] / "language" / "lexicon"


@lru_cache(maxsize=None)
def lexicon_file(name: str):
    """`lexicon/<name>.yaml` as read, once."""
    return yaml.safe_load((LEXICON / f"{name}.yaml").read_text(encoding="utf-8"))


@lru_cache(maxsize=None)
def words_of(name: str, part: str) -> tuple[str, ...]:
    """The list `part` of `lexicon/<name>.yaml`, lower case, in its order."""
    raw = lexicon_file(name)
    words = raw.get(part) if isinstance(raw, dict) else None
    if not isinstance(words, list) or not all(isinstance(w, str) for w in words):
        raise ValueError(f"lexicon/{name}.yaml: a `{part}:` list of strings is expected")
    return tuple(w.strip().lower() for w in words)


@lru_cache(maxsize=None)  # built once: the readers that use them run on every span of every request
def any_of(name: str, part: str, curly: bool = False) -> str:
    """`alternation` of the list `part` of `lexicon/<name>.yaml`.

    >>> any_of("dates", "back_from_now")
    '(?:back|ago)'
    """
    return alternation(words_of(name, part), curly)


def alternation(words, curly: bool = False) -> str:
    """A regex group matching any of the words or phrases, the longest tried first (so "this coming" is not
    read as "this"); with `curly`, an apostrophe matches a typographic one too ("i’d").

    >>> alternation(["i'd", "id"], curly=True)
    "(?:i['’]d|id)"
    """
    escaped = (re.escape(w).replace(r"\ ", " ") for w in sorted(set(words), key=lambda w: (-len(w), w)))
    return "(?:" + "|".join(e.replace("'", "['’]") if curly else e for e in escaped) + ")"
