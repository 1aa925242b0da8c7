"""Whether words may be a person's name, and which part of one a lone word is.

A name is told apart by its form (capitals, whole words), by how common its words are in English (wordfreq's
Zipf scale: "sure" is a word, "Priyanka" a name) and by what the pack itself says (its own words are no
names); a label before it ("last name Shah", "Mr. Chen") says which part it is.

>>> written_as_name("Ana Ruiz"), written_as_name("ana ruiz"), written_as_name("Ana")
(True, False, False)
>>> lone("Mr. Chen"), lone("Emma Wilson")
(True, False)
>>> names_a_person("films by Ana Ruiz"), names_a_person("the film The Blue Harbour"), names_a_person("Sure Thing")
(True, False, False)
"""

from __future__ import annotations

import re
from functools import lru_cache

from pipeline.language.words import FUNCTION_WORDS, NAME_LABELS, pack_words, word_list, word_lists
from pipeline.values.normalizers import _TITLES
from pipeline.values.spans import TOKEN

COMMON_WORD_ZIPF = 5.0  # a word this frequent in English ("sure", "wrong", "may") is no name in lower case
LONE_NAME_ZIPF = 4.0  # a single word opening a sentence is a name only if rarer than this ("Priyanka", not "Haha")

# A label or a title before a lone name says which part of a name it is ("last name Shah", "Mr. Chen").
_PARTS = word_lists("name_parts")
_GIVEN_LABELS = {label.replace(" ", "") for label in _PARTS["given"]}  # "firstname" and "first name" alike


def _labels(labels) -> str:
    """The labels as alternatives of a pattern, the longest first, a space in one optional ("last ?name")."""
    return "|".join(re.escape(label).replace(r"\ ", " ?") for label in sorted(labels, key=len, reverse=True))


_PART_NAMED = r"\b(" + _labels(_PARTS["given"]) + "|" + _labels(_PARTS["family"]) + ")"  # the group: which part
_LABEL_TAIL = r"\s*(?:is\s+|[:=]\s*)?"  # "last name Shah", "surname is Shah", "surname: Shah"
_FAMILY_LABEL = re.compile(r"\b(?:" + _labels(_PARTS["family"]) + "|" + "|".join(sorted(word_list("honorifics")))
                           + r")\b\.?"
                           + _LABEL_TAIL + "$", re.IGNORECASE)
PART_LABEL = re.compile(_PART_NAMED + _LABEL_TAIL + "$", re.IGNORECASE)
_LABELLED_NAME = re.compile(_PART_NAMED + _LABEL_TAIL  # then a word that is no preposition or article
                            + r"(?!(?:" + "|".join(sorted(_PARTS["not_a_name"])) + r")\b)[^\W\d_]", re.IGNORECASE)


def labelled_parts(text: str) -> set[int]:
    """The parts of a name (0 given, 1 family) the text labels ("first name Ana", "surname: Ruiz")."""
    return {_part_labelled(m.group(1)) for m in _LABELLED_NAME.finditer(text)}


def _part_labelled(label: str) -> int:
    """0 for a label of the given name ("first name", "firstname"), 1 for one of the family name."""
    return 0 if label.lower().replace(" ", "") in _GIVEN_LABELS else 1


def name_part_of(argument: str) -> int | None:
    """The part of a person's name an argument's own name says it is (0 given, 1 family), if any.

    >>> name_part_of("customer_first_name"), name_part_of("contact_last_name"), name_part_of("surname")
    (0, 1, 1)
    >>> name_part_of("first_name_length"), name_part_of("customer_name")
    (None, None)
    """
    words = argument.lower().replace("_", " ")
    for part, labels in ((0, _PARTS["given"]), (1, _PARTS["family"])):
        if any(words == label or words.endswith(" " + label) for label in labels):
            return part
    return None


def lone(name: str) -> bool:
    """Whether a name is one word, a title aside ("Maria", "Mr. Chen")."""
    return len(TOKEN.findall(re.sub(_TITLES, "", name.strip(), flags=re.IGNORECASE))) == 1


def lone_name_part(text: str, start: int, end: int) -> int:
    """Which part of a name a lone word is: the family name (1) with a title or after a last-name label, else
    the given name (0), as a person is called by it ("change Maria's phone")."""
    titled = re.match(_TITLES, text[start:end], flags=re.IGNORECASE) is not None
    return 1 if titled or _FAMILY_LABEL.search(text[:start]) else 0


def _full_name_part(pack, argument: str) -> int | None:
    """The part of a whole name a full-name predicate of the pack gives the argument as, if one gives it."""
    for extra in pack.spec.ir_extra.values():
        if extra.normalizer == "full_name" and argument in extra.gives:
            return extra.gives.index(argument)
    return None


def given_by_full_name(pack, argument: str) -> bool:
    """Whether a full-name predicate of the pack gives the argument (it splits a whole name itself)."""
    return _full_name_part(pack, argument) is not None


def name_part(pack, argument: str) -> int | None:
    """The part of a whole name (0 given, 1 family) an argument is: the one a full-name predicate gives it
    as, else the one its own name says (`name_part_of`)."""
    part = _full_name_part(pack, argument)
    return part if part is not None else name_part_of(argument)


def written_as_name(value: str) -> bool:
    """A whole name written as one ("Ana Ruiz"): two or more words, each capitalised. Once in a goal's
    words it is the goal's person, so it is written, not left to the model."""
    words = TOKEN.findall(value)
    return len(words) >= 2 and all(w[:1].isupper() for w in words)


_NAME = re.compile(r"\b([A-Z][a-z]+)\s+(?:[A-Z][a-z]*\.?\s+)?[A-Z][\w'-]+")  # "Ana Ruiz", "Ana M. Ruiz"


def names_a_person(text: str) -> bool:
    """Whether the text writes a person's name: a given name (of those `gender_guesser` knows, from many
    countries) that is no function word, then one or two capitalised words."""
    return any(m.group(1).lower() not in FUNCTION_WORDS and _given_name(m.group(1)) for m in _NAME.finditer(text))


@lru_cache(maxsize=4096)
def _given_name(word: str) -> bool:
    return _given_names().get_gender(word) != "unknown"


@lru_cache(maxsize=1)
def _given_names():
    from gender_guesser.detector import Detector

    return Detector(case_sensitive=False)


def zipf(word: str) -> float:
    from wordfreq import zipf_frequency

    return zipf_frequency(word.lower(), "en")


def _common_word(word: str) -> bool:
    return zipf(word) >= COMMON_WORD_ZIPF


def _beside_a_name_word(pack, text: str, start: int, end: int) -> bool:
    """Whether the word before or after could be the other half of a name ("emma" in "emma wilson")."""
    before = re.search(r"([^\W\d_]+)\s+$", text[:start])
    after = re.match(r"\s+([^\W\d_]+)", text[end:])
    return any(m and m.group(1).lower() not in FUNCTION_WORDS and not _common_word(m.group(1))
               and m.group(1).lower() not in pack_words(pack) for m in (before, after))


def could_be_name(pack, text: str, start: int, end: int) -> bool:
    """Whether the words may be a person's name: whole words (not "Linda" inside linda.t@x.com, not the
    "re" of "you're"), each capitalised or not a word of the language or of the pack ("her", "record",
    "sure"); a capitalised common word opening a sentence ("Sorry, ...") is no name either."""
    if re.match(r"[.@\-]\w", text[end:end + 2]) or (start and re.match(r"[\w.@'’\-]", text[start - 1])):
        return False  # part of an address, a contraction or a compound ("in-laws")
    opens_sentence = not text[:start].strip() or text[:start].rstrip()[-1] in ".!?"
    words = TOKEN.findall(text[start:end])
    if len(words) == 1 and opens_sentence and zipf(words[0]) >= LONE_NAME_ZIPF:  # "Haha, ...", "Sure"
        return False
    if len(words) == 1 and words[0].islower() and text.strip(" .,!?") != words[0] \
            and not _beside_a_name_word(pack, text, start, end):
        return False  # one word in lower case is a name only as a whole answer or part of a whole name
    return all(w.lower() not in FUNCTION_WORDS and w.lower() not in NAME_LABELS
               and not ((w[0].islower() or (i == 0 and opens_sentence)) and _common_word(w))
               and (w[0].isupper() and not (i == 0 and opens_sentence) or w.lower() not in pack_words(pack)
                    and not (len(w) > 4 and w.endswith(("ed", "ing")))) for i, w in enumerate(words))
