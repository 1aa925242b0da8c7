"""General English word lists kept as data (`lexicon/<name>.yaml`, a `words:` list): the parts of the
language rules that are vocabulary, not logic, so they are read, reviewed and extended without touching
code. No list holds a service's words.

>>> "verify" in word_list("request_verbs") and "the" not in word_list("request_verbs")
True
"""

from __future__ import annotations

import re
from functools import lru_cache


from pipeline.values.lexicon import LEXICON, lexicon_file
from pipeline.values.spans import TOKEN


_lexicon = lexicon_file  # `lexicon/<name>.yaml` as read, once (the value readers read it so too)


@lru_cache(maxsize=None)
def word_list(name: str, part: str = "words") -> frozenset[str]:
    """The words of `lexicon/<name>.yaml`, lower case: its `words:` list, or another list of it (`part`)."""
    raw = _lexicon(name)
    words = raw.get(part) if isinstance(raw, dict) else None
    if not isinstance(words, list) or not all(isinstance(w, str) for w in words):
        raise ValueError(f"lexicon/{name}.yaml: a `{part}:` list of strings is expected")
    return frozenset(w.strip().lower() for w in words)


@lru_cache(maxsize=None)
def word_lists(name: str) -> dict[str, frozenset[str]]:
    """Every list of `lexicon/<name>.yaml` by its name (a lexicon of several: one list per period, ...).

    >>> sorted(word_lists("period_values"))
    ['day', 'month', 'week', 'year']
    """
    raw = _lexicon(name)
    if not isinstance(raw, dict):
        raise ValueError(f"lexicon/{name}.yaml: lists by name are expected")
    return {part: word_list(name, part) for part in raw}


def known_lists() -> list[str]:
    """The names of the English word lists (`lexicon/<name>.yaml`)."""
    return sorted(p.stem for p in LEXICON.glob("*.yaml"))


def pack_word_list(pack, name: str) -> frozenset[str]:
    """An English word list with the words the pack adds to it (its `lexicon:` section)."""
    return word_list(name) | {w.strip().lower() for w in pack.spec.lexicon.get(name, [])}


EDGE_WORDS = word_list("edge_words")
REQUEST_WORDS = (EDGE_WORDS - {"of"}) | word_list("request_words")
FUNCTION_WORDS = REQUEST_WORDS | word_list("function_words")
PERSON_NOUNS = word_list("person_nouns")
SPEAKER_WORDS = word_list("speaker_words")  # "my", "mine": the speaker's own things
SUBJECT_PRONOUNS = word_list("subject_pronouns")
NAME_LABELS = word_list("name_labels")


@lru_cache(maxsize=None)
def _same_things() -> dict[str, str]:
    return {w: min(group.split()) for group in word_list("same_things") for w in group.split()}


def same_thing(word: str) -> str:
    """One word for each group of `lexicon/same_things.yaml` ("kids", "children" -> "child"), others as they are.

    >>> same_thing("kids"), same_thing("children"), same_thing("wifi")
    ('child', 'child', 'wifi')
    """
    return _same_things().get(word.lower(), word.lower())


# A word of a name rarer than this in English may be two words written as one ("kidfriendly"); each of
# them must be at least this common.
_RUN_TOGETHER_ZIPF, _PART_ZIPF = 2.5, 3.5


@lru_cache(maxsize=4096)
def split_run_together(word: str) -> tuple[str, ...]:
    """A name's word as the two common English words it was written from, or itself: schemas write
    "kidfriendly", "singerartist", "dropoff", and users write the words apart.

    >>> split_run_together("kidfriendly"), split_run_together("dropoff"), split_run_together("hotel")
    (('kid', 'friendly'), ('drop', 'off'), ('hotel',))
    >>> split_run_together("transferee")  # each part three letters at least: "ee" is none
    ('transferee',)
    """
    from wordfreq import zipf_frequency

    if len(word) < 6 or zipf_frequency(word, "en") >= _RUN_TOGETHER_ZIPF:
        return (word,)
    splits = [(word[:i], word[i:]) for i in range(3, len(word) - 2)]
    scored = [(min(zipf_frequency(a, "en"), zipf_frequency(b, "en")), a, b) for a, b in splits]
    best = max(scored, default=(0.0, "", ""))
    return (best[1], best[2]) if best[0] >= _PART_ZIPF else (word,)


def name_words(name: str, apart: bool = True) -> list[str]:
    """The words of a slot or intent name, lower case, run-together ones apart unless not `apart`
    ("GetRide" -> get, ride; "has_wifi" -> has, wifi; "kidfriendly" -> kid, friendly)."""
    words = [w.lower() for w in re.findall(r"[A-Z]?[a-z]+|\d+", name)]
    return [part for w in words for part in split_run_together(w)] if apart else words


def same_things(word: str) -> list[str]:
    """The other words of the word's group ("kid" -> child, children, kids), none for a word in none."""
    group = same_thing(word)
    return sorted(w for w, g in _same_things().items() if g == group and w != word.lower())


def pack_words(pack) -> set[str]:
    """The words the pack itself uses (its goals' and arguments' descriptions and examples; not the names
    inside an example: "The Blue Heron" in "hold a booking at The Blue Heron" is a value)."""
    if not hasattr(pack, "_words"):
        texts = [g.description for g in pack.spec.goals.values()]
        texts += [a.description for a in pack.spec.arguments.values()]
        words = {w.lower() for t in texts for w in TOKEN.findall(t)}
        for example in (e for g in pack.spec.goals.values() for e in g.examples):
            words |= {w.lower() for i, w in enumerate(TOKEN.findall(example)) if i == 0 or not w[:1].isupper()}
        object.__setattr__(pack, "_words", words)
    return pack._words


def goal_words(pack) -> set[str]:
    """The words of the pack's goal names ("invoice", "create")."""
    return {w for goal in pack.spec.goals for w in goal.split("_")}


def says_its_own(words: str) -> bool:
    """Whether the words say a thing is the speaker's own (`speaker_words`).

    >>> says_its_own("add it to my list"), says_its_own("show me the lists")
    (True, False)
    """
    return bool(set(re.findall(r"[a-z]+", words.lower())) & SPEAKER_WORDS)
