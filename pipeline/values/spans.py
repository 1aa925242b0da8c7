"""Spans of a request: runs of its word tokens, and the ones that are values (a date, a period, an amount).

Spans are runs of word tokens with the text between them ("4,500", "jake.miller@gmail.com", "P&L"); a gap
longer than a few characters, or one holding a quote, a backslash or a line break, ends a span.
"""

from __future__ import annotations

import re
from datetime import date

from pipeline.values import dates
from pipeline.values.lexicon import any_of
from pipeline.values.numbers import parse_amount

MAX_SPAN_TOKENS = 10
TOKEN = re.compile(r"[^\W_]+")
_MAX_GAP = 3
# A reference day for telling whether words are a date at all (which day they are does not matter here).
_ANY_DAY = date(2024, 6, 15)


def request_spans(query: str, max_tokens: int = MAX_SPAN_TOKENS) -> list[tuple[int, int]]:
    """(start, end) of every run of 1..max_tokens consecutive tokens of the request."""
    tokens = list(TOKEN.finditer(query))
    spans = []
    for i, first in enumerate(tokens):
        for j in range(i, min(len(tokens), i + max_tokens)):
            if j > i:
                gap = query[tokens[j - 1].end():tokens[j].start()]
                if len(gap) > _MAX_GAP or any(c in gap for c in '"\\\n\r'):
                    break
            spans.append((first.start(), tokens[j].end()))
    return spans


def maximal(readable: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Drop every readable span inside a longer readable one: "December 2023" in "September to December
    2023", "500" in "1,500", "call" in "video call" are parts, not values."""
    return [a for a in readable if not any(b != a and b[0] <= a[0] and a[1] <= b[1] for b in readable)]


# A value does not begin or end with a word that joins clauses ("2022 and" is "2022").
_JOIN_WORDS = any_of("value_words", "clause_joins")
_JOINS = re.compile(rf"^{_JOIN_WORDS}\b|\b{_JOIN_WORDS}$", re.I)


def _inside_number(text: str, start: int, end: int) -> bool:
    """Whether the span is part of a longer run of digits ("617.555" of a phone number "617.555.0199")."""
    return bool(re.search(r"\d[.,/-]?$", text[:start]) or re.match(r"[.,/-]?\d", text[end:]))


def without_values(text: str) -> str:
    """The text without the words that are a period or an amount ("pull expenses for Q3 2023" -> "pull
    expenses for"): what names a goal is the rest, and a value's words only blur it."""
    spans = [sp for sp in request_spans(text, max_tokens=6)
             if not _inside_number(text, *sp) and not _JOINS.search(text[sp[0]:sp[1]])]
    readable = maximal([sp for sp in spans if dates.resolve_period(text[sp[0]:sp[1]], _ANY_DAY) is not None
                        or parse_amount(text[sp[0]:sp[1]], whole=True) is not None])
    kept, last = [], 0
    for a, b in sorted(readable):
        if a >= last:
            kept.append(text[last:a])
            last = b
    kept.append(text[last:])
    stripped = re.sub(r"\s+", " ", "".join(kept)).strip()
    return stripped or text
