"""How a request's words pick a list: the words of a REST list's path that say which of its resource's
things it lists (`RestSemantics.picks`: `/movie/top_rated` -> top, rated), said in the request in their order.
"""

from __future__ import annotations

import re

from pipeline.language.words import EDGE_WORDS, same_thing, word_list
from pipeline.packs.pack import RestSemantics
from pipeline.values.normalizers import _stem

_LANGUAGE = word_list("function_words") | EDGE_WORDS  # words of a path that pick nothing ("on the air": air)
_ASKING = {_stem(w) for name in ("function_words", "edge_words", "request_words", "question_openers")
           for phrase in word_list(name) for w in phrase.split()}


def stems(text: str) -> set[str]:
    """The text's words, each folded by the value rules' suffix folding (`normalizers._stem`)."""
    return {_stem(w) for w in re.findall(r"[a-z]+", text.lower())}


def content_stems(text: str) -> set[str]:
    """The text's words, folded, but the words of asking and of the language (`function_words`,
    `edge_words`, `request_words`, `question_openers`).

    >>> sorted(content_stems("Which people wrote the best rated songs?"))
    ['best', 'peopl', 'rat', 'song', 'wrot']
    """
    return stems(text) - _ASKING


def resources_named(resources, words: str) -> set[str]:
    """The resources (REST nouns, `RestSemantics.resource`) whose noun the words say, folded, or a word for the
    same thing (`lexicon/same_things.yaml`: a film is a movie).

    >>> sorted(resources_named({"album", "song", "label"}, "the labels of two albums"))
    ['album', 'label']
    >>> resources_named({"movie", "tv"}, "the director of the film Heat")
    {'movie'}
    """
    said = stems(words) | {same_thing(w) for w in re.findall(r"[a-z]+", words.lower())}
    return {r for r in resources if _stem(r) in said or same_thing(r) in said}


def picks_said(rest: RestSemantics | None, words: str) -> int:
    """How many words of a list's picks the words say, when they say every one in order (0 when they do not,
    or the list has none): the more of them, the surer which list ("the most popular show on the air" says
    more of `/tv/on_the_air`'s picks than of `/tv/popular`'s).

    >>> rest = RestSemantics(action="list", resource="tv", finds="results[].id", picks=["on", "the", "air"])
    >>> picks_said(rest, "the cast of a show on the air"), picks_said(rest, "a show on tv"), picks_said(rest, "its air date")
    (3, 0, 0)
    """
    if rest is None or rest.action != "list" or not rest.finds or not rest.picks:
        return 0
    content = picked_words(rest)
    said = [_stem(w) for w in re.findall(r"[a-z0-9]+", words.lower())]
    # the picks in their order, a word at most between two ("best-ever rated"): "air date" is no "on the air"
    width = 2 * len(rest.picks) - 1
    every = [_stem(w) for w in rest.picks]
    return len(every) if content and any(_in_order(every, said[i:i + width]) for i in range(len(said))) else 0


def picked_words(rest: RestSemantics | None) -> list[str]:
    """A list's picks but the words of the language, folded (`/tv/on_the_air` -> air)."""
    return [_stem(w) for w in (rest.picks if rest is not None else []) if w not in _LANGUAGE]


def _in_order(wanted: list[str], window: list[str]) -> bool:
    rest = iter(window)
    return all(any(w == x for x in rest) for w in wanted)
