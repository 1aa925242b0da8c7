"""How a request's words pick a list: the words of a REST list's path that say which of its resource's
things it lists (`RestSemantics.picks`: `/movie/top_rated` -> top, rated), said in the request in their order.
"""

from __future__ import annotations

import re

from pipeline.language.words import EDGE_WORDS, same_thing, word_list
from pipeline.packs.pack import BOOLEAN_VALUES, RestSemantics
from pipeline.language.openings import opening_word
from pipeline.language.values import written_as_a_name
from pipeline.values.normalizers import _stem
from pipeline.values.spans import TOKEN

_LANGUAGE = word_list("function_words") | EDGE_WORDS  # words of a path that pick nothing ("on the air": air)
_ASKING = {_stem(w) for name in ("function_words", "edge_words", "request_words", "question_openers")
           for phrase in word_list(name) for w in phrase.split()}


QUOTES = "\"'“‘"  # a quote that opens a name


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
    same thing (`lexicon/same_things.yaml`: a film is a movie); a noun of several words said as they are
    ("api key" of `api_key`) or run together ("room type" of `roomtype`). A resource said only inside another
    one said is not named itself ("room type 3" names no room), nor one said only right before another, which
    it qualifies ("a storage bucket" is a bucket), unless it is the verb the words open with ("order book
    9").

    >>> sorted(resources_named({"album", "song", "label"}, "the labels of two albums"))
    ['album', 'label']
    >>> resources_named({"movie", "tv"}, "the director of the film Heat")
    {'movie'}
    >>> sorted(resources_named({"room", "roomtype", "api_key", "key"}, "list room type 3 and my API keys"))
    ['api_key', 'roomtype']
    >>> sorted(resources_named({"storage", "bucket"}, "a storage bucket, then its storage"))
    ['bucket', 'storage']
    >>> resources_named({"storage", "bucket"}, "create a storage bucket")
    {'bucket'}
    >>> sorted(resources_named({"order", "book"}, "please order book 9"))
    ['book', 'order']
    >>> resources_named({"form", "verification"}, "fetch a verification for me")
    {'verification'}

    A resource whose noun is a word of the language (`/me`) is not named by that word:

    >>> resources_named({"me", "playlist"}, "make me a playlist")
    {'playlist'}
    """
    tokens = re.findall(r"[a-z]+", words.lower())
    said = [{_stem(w), same_thing(w)} for w in tokens]  # each word, folded, and its group's word
    # two words run together ("room type" of `roomtype`), neither a word of the language ("for me" is no form)
    run = [{_stem(a + b)} if a not in _LANGUAGE and b not in _LANGUAGE else set() for a, b in zip(tokens, tokens[1:])]
    spans: dict[str, list[tuple[int, int]]] = {}
    for resource in resources:
        parts = resource.split("_")
        if len(parts) > 1:
            found = [(i, i + len(parts)) for i in range(len(tokens) - len(parts) + 1)
                     if all(_stem(p) in said[i + k] for k, p in enumerate(parts))]
        elif resource in _LANGUAGE:  # `/me`: "make me a list" names no resource
            continue
        else:
            forms = {_stem(resource), same_thing(resource)}
            found = [(i, i + 1) for i, w in enumerate(said) if forms & w] + \
                    [(i, i + 2) for i, w in enumerate(run) if forms & w]
        if found:
            spans[resource] = found
    others = {r: [span for o, theirs in spans.items() if o != r for span in theirs] for r in spans}
    inside = {r for r, found in spans.items()  # "room" in "room type"
              if all(any(a <= s and e <= b and (a, b) != (s, e) for a, b in others[r]) for s, e in found)}
    verb = opening_word(words)[0]  # "order pet 9": a verb before a noun qualifies nothing
    modifying = {r for r, found in spans.items()  # "storage" of "storage bucket": English puts the head last
                 if all(any(a == e for a, _ in others[r]) and tokens[s] != verb for s, e in found)}
    return set(spans) - inside - modifying


def named_itself(resource: str, words: str) -> bool:
    """Whether the words name a thing of the resource by its own name: its noun (or a word for the same
    thing) right before words written as a name ("the album Night Lights", "the film Heat"). Such a thing
    is found by its name, not through another one the words name.

    >>> named_itself("album", "save the album Night Lights"), named_itself("album", "the albums of Ana Ruiz")
    (True, False)
    >>> named_itself("movie", "who directed the film Heat"), named_itself("movie", "more movies, Ana Ruiz or Bo?")
    (True, False)
    """
    return _own_name_at(resource, words) is not None


def _own_name_at(resource: str, words: str) -> tuple[list[re.Match], int] | None:
    """The words' tokens and the index of the noun of the resource right before a name (`named_itself`)."""
    forms = {_stem(resource), same_thing(resource)}
    tokens = list(re.finditer(rf"[\w{QUOTES}]+", words))
    for i, (a, b) in enumerate(zip(tokens, tokens[1:])):
        if forms & {_stem(a.group().lower()), same_thing(a.group().lower())} and written_as_a_name(b.group()) \
                and not words[a.end():b.start()].strip():  # "films, Ana" is not
            return tokens, i
    return None


def own_name_phrase(resource: str, words: str) -> str:
    """The words that name a thing of the resource by its noun and its own name (`named_itself`), from the
    noun to the name's last word written as one; '' where the words do not.

    >>> own_name_phrase("track", "move the track Blue Moon to my playlist Road Trip")
    'track Blue Moon'

    A name in quotes is left in the words as they are, which read it whole by its quotes:

    >>> own_name_phrase("company", 'where was the company "blue sky films" founded?')
    ''
    """
    found = _own_name_at(resource, words)
    if found is None or found[0][found[1] + 1].group()[0] in QUOTES:  # quotes say where a name ends, as it is
        return ""
    tokens, noun = found
    end = noun + 1
    while end + 1 < len(tokens) and written_as_a_name(tokens[end + 1].group()) \
            and not words[tokens[end].end():tokens[end + 1].start()].strip():
        end += 1
    return words[tokens[noun].start():tokens[end].end()]


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


def value_said(pack, argument: str, words: str) -> bool:
    """Whether the words give a list's or a search's argument one of its closed values, written out whole
    (a yes/no flag excepted: "yes" is said of anything; and a value in digits alone, a code), so that they
    pick which of its things are meant ("the pets that are sold": the pets by status). Free words are not judged so: a word of an argument's
    name is as often the thing asked for ("the keywords of the film") as what picks it.

    >>> from pipeline.packs.pack import ArgumentType
    >>> class Pets:  # a pack's argument types, as `Pack.value_spec` gives them
    ...     value_spec = {"status": ArgumentType(normalizer="choice", values=["available", "sold"]),
    ...                   "tags": ArgumentType(normalizer="title_text")}.get
    >>> value_said(Pets, "status", "the pets that are sold"), value_said(Pets, "status", "my pets")
    (True, False)
    >>> value_said(Pets, "status", "the pets that are availble"), value_said(Pets, "tags", "the pet tagged stray")
    (False, False)
    """
    spec = pack.value_spec(argument)
    values = getattr(spec, "values", [])
    if not values or set(values) == set(BOOLEAN_VALUES):
        return False
    said = f" {' '.join(TOKEN.findall(words.lower()))} "
    named = [*values, *(w for others in getattr(spec, "synonyms", {}).values() for w in others)]
    # a value written in digits alone (`with_status: 0..5`) is a number said for many other reasons
    return any(f" {' '.join(TOKEN.findall(value.lower()))} " in said for value in named if re.search(r"[^\W\d_]", value))
