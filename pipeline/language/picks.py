"""How a request's words pick a list: the words of a REST list's path that say which of its resource's
things it lists (`RestSemantics.picks`: `/movie/top_rated` -> top, rated), said in the request in their order.
"""

from __future__ import annotations

import re

from pipeline.language.words import word_list
from pipeline.packs.pack import RestSemantics


def _stems(text: str) -> set[str]:
    return {fold(w) for w in re.findall(r"[a-z]+", text.lower())}


def content_stems(text: str) -> set[str]:
    """The text's words, folded, but the words of asking and of the language (`function_words`,
    `edge_words`, `request_words`, `question_openers`).

    >>> sorted(content_stems("Who directed the top rated movies?"))
    ['direct', 'movi', 'rat', 'top']
    """
    glue = {fold(w) for name in ("function_words", "edge_words", "request_words", "question_openers")
            for phrase in word_list(name) for w in phrase.split()}
    return _stems(text) - glue


def fold(word: str) -> str:
    for suffix in ("ing", "ed", "es", "s", "e"):
        if len(word) > len(suffix) + 2 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def picks_said(rest: RestSemantics | None, words: str) -> int:
    """How many words of a list's picks the words say, when they say every one but function words (0 when
    they do not, or the list has none).

    >>> rest = RestSemantics(action="list", resource="tv", finds="results[].id", picks=["on", "the", "air"])
    >>> picks_said(rest, "the cast of a show on the air"), picks_said(rest, "a show on tv"), picks_said(rest, "its air date")
    (1, 0, 0)
    """
    if rest is None or rest.action != "list" or not rest.finds or not rest.picks:
        return 0
    content = picked_words(rest)
    said = [fold(w) for w in re.findall(r"[a-z0-9]+", words.lower())]
    # the picks in their order, a word at most between two ("top-1 rated"): "air date" is no "on the air"
    width = 2 * len(rest.picks) - 1
    every = [fold(w) for w in rest.picks]
    return len(content) if content and any(_in_order(every, said[i:i + width]) for i in range(len(said))) else 0


def picked_words(rest: RestSemantics | None) -> list[str]:
    """A list's picks but the words of the language, folded (`/tv/on_the_air` -> air)."""
    glue = word_list("function_words") | word_list("edge_words")
    return [fold(w) for w in (rest.picks if rest is not None else []) if w not in glue]


def _in_order(wanted: list[str], window: list[str]) -> bool:
    rest = iter(window)
    return all(any(w == x for x in rest) for w in wanted)
