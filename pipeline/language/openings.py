"""Where a clause's own request opens: past its fillers ("ok so"), a please and a "can you" (the lists of
`lexicon/fillers.yaml` and `lexicon/asking_frames.yaml`), and the word it opens with.

>>> opening_word("ok, can you please rename it"), opening_word("get me registered"), opening_word("fill it in")
(('rename', 'it'), ('get', 'registered'), ('fill', 'in'))
>>> opening_word("")
(None, '')
>>> counted_noun("so how many chapters does it have?"), counted_noun("show me how it works")
('chapters', None)
"""

from __future__ import annotations

import re

from pipeline.language.words import word_list

_WORD = re.compile(r"[a-z0-9]+(?:['’][a-z]+)?")

# Words that open a clause without changing what it does ("ok so", "honestly", "hi").
FILLERS = word_list("fillers")
POLITE = word_list("asking_frames", "polite")
_MODALS = word_list("asking_frames", "modals")
_ADDRESSEES = word_list("asking_frames", "addressees")
_OBJECT_PRONOUNS = word_list("asking_frames", "object_pronouns")
_COUNTS = [c.split() for c in word_list("question_openers", "counts")]


def words(text: str) -> list[str]:
    """The text's words, lower case, an apostrophe's ending kept ("what's")."""
    return _WORD.findall(text.lower().replace("’", "'"))


def after_fillers(tokens: list[str]) -> int:
    """Where the clause's own words begin ("ok so show me ..." -> "show"); the last word at the latest."""
    first = 0
    while first < len(tokens) - 1 and tokens[first] in FILLERS:
        first += 1
    return first


def opening(tokens: list[str]) -> int:
    """Where a clause's own request opens: past its fillers, a please and a "can you" ("ok, can you please
    *refund* my order")."""
    i = after_fillers(tokens)
    while i < len(tokens) - 1 and tokens[i] in POLITE:
        i += 1
    if i < len(tokens) - 2 and tokens[i] in _MODALS and tokens[i + 1] in _ADDRESSEES:
        i += 2
        while i < len(tokens) - 1 and tokens[i] in POLITE:
            i += 1
    return i


def opening_word(text: str) -> tuple[str | None, str]:
    """The word a clause's own request opens with (`opening`): its verb, where it is an imperative; a
    question's opener where it is a question; and the word after it ("" at the end), past an object pronoun
    ("fill *it* in")."""
    tokens = words(text)
    i = opening(tokens)
    if i >= len(tokens):
        return None, ""
    after = tokens[i + 1:]
    if after[:1] and after[0] in _OBJECT_PRONOUNS and len(after) > 1:
        after = after[1:]
    return tokens[i], after[0] if after else ""


def counted_noun(text: str) -> str | None:
    """The word a clause's question asks the number of ("how many *seasons* ..."), past its fillers and a
    please; None for a clause that asks no count."""
    tokens = words(text)
    i = opening(tokens)
    for count in _COUNTS:
        if tokens[i:i + len(count)] == count and len(tokens) > i + len(count):
            return tokens[i + len(count)]
    return None
