"""Which spans of a text may be free text naming a thing ("logo design", "The Blue Door", "18300 Carriage
Drive"): short, without the words of the request itself, of a clause's subject or of another value.

>>> t = "take me to 18300 Carriage Drive for 2"
>>> [t[a:b] for a, b in addresses(t)], addresses("pay 500 Acme Corp")
(['18300 Carriage Drive'], [])
>>> whole_name_with_number("Big 4"), whole_name_with_number("4 people"), whole_name_with_number("Nopa")
([(0, 5)], [], [])
>>> _sentence_start("In San Jose.", 0), _sentence_start("Yes. At Nopa", 5), _sentence_start("Dinner At Nopa", 7)
(True, True, False)
"""

from __future__ import annotations

import re

from pipeline.language.names import written_as_name
from pipeline.language.words import FUNCTION_WORDS, REQUEST_WORDS, SUBJECT_PRONOUNS, goal_words, word_list
from pipeline.values.spans import TOKEN

MAX_TEXT_SPAN_TOKENS = 6  # free text (an invoice's detail) is short


def overlaps(span: tuple[int, int], others: list[tuple[int, int]]) -> bool:
    """Whether the span shares a character with any of the others."""
    return any(a < span[1] and span[0] < b for a, b in others)


def phrases(pack, text: str, spans: list[tuple[int, int]], claimed: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Spans that may be free text naming a thing ("logo design"): short, without the words of a date, an
    amount, a time or a contact (`claimed`), of the pack's goals ("invoice") or of the request itself
    ("make", "for"), and without a clause's subject."""
    found = []
    for a, b in spans:
        words = [w.lower() for w in TOKEN.findall(text[a:b])]
        if a and text[a - 1] in "'’":  # the tail of "there'll", "it's"
            continue
        # A run of capitalised words (not "I") is a name, whatever words it is made of ("from New York", "at
        # The Blue Door"): "new" or "the" there is no word of the request. A sentence's first capital alone
        # says nothing; the capitals after it do: "In San Jose." is a place after "in".
        named = written_as_name(text[a:b]) and "i" not in words
        if addressed(text, (a, b)):  # "Hello, Sam, ...": whom the user greets
            continue
        if named and words[0] in FUNCTION_WORDS and words[0] != "the" and _sentence_start(text, a):
            named = False
        plain = [] if named else words
        if (len(words) > MAX_TEXT_SPAN_TOKENS or plain and (plain[0] in FUNCTION_WORDS or plain[-1] in FUNCTION_WORDS)
                or re.search(r"[^\w\s'&/-]|\s-|-\s", text[a:b]) or set(plain) & REQUEST_WORDS
                or set(words) & goal_words(pack) or overlaps((a, b), claimed) or set(plain) & SUBJECT_PRONOUNS):
            continue
        found.append((a, b))
    return found


def _sentence_start(text: str, at: int) -> bool:
    return re.search(r"(?:^|[.!?]\s+)$", text[:at]) is not None


_ADDRESS = re.compile(r"\b\d+[A-Za-z]?\s+(?:[A-Z][\w'’.-]*\s+){0,4}(?P<last>[A-Z][A-Za-z]*)\b\.?")


def addresses(text: str) -> list[tuple[int, int]]:
    """A house number, capitalised words and a street type ("12 Elm St"): its number is no amount or count."""
    out = []
    for m in _ADDRESS.finditer(text):
        words = m.group().split()
        if len(words) >= 3 and m["last"].lower() in word_list("street_types"):
            out.append((m.start(), m.start() + len(m.group().rstrip("."))))
    return out


def whole_name_with_number(text: str) -> list[tuple[int, int]]:
    """The whole text, when it is nothing but a name written with capitals and a number in it ("Studio 54"):
    an answer that names something, whose number counts nothing."""
    words = list(TOKEN.finditer(text))
    if not 1 < len(words) <= MAX_TEXT_SPAN_TOKENS or not any(w.group().isdigit() for w in words):
        return []
    if all(w.group().isdigit() or w.group()[0].isupper() for w in words):
        return [(words[0].start(), words[-1].end())]
    return []


def begins_a_name(text: str, span: tuple[int, int]) -> bool:
    """Whether the words are one word written with a capital inside a sentence, right before another such
    word ("go to One Market Street", "a song by Three Days Grace"): the first word of a name, so a number
    word there counts nothing.

    >>> begins_a_name("go to One Market Street", (6, 9)), begins_a_name("One ticket please", (0, 3))
    (True, False)
    >>> begins_a_name("a table for Two, please", (12, 15)), begins_a_name("a table for two Friday", (12, 15))
    (False, False)
    """
    a, b = span
    after = re.match(r"\s+([A-Z])", text[b:])
    return bool(re.fullmatch(r"[A-Z][a-z]+", text[a:b])) and _inside_a_sentence(text, a) and after is not None


def begins_a_numbered_name(text: str, span: tuple[int, int]) -> bool:
    """Whether the words are a number written right before a capitalised word ("the cover of 4 Quiet Rooms",
    "a cab to 18 Harbor Lane"): the first word of a name, no value alone. On SGD train's user turns, 468
    of 483 such numbers are inside one slot value with the word after (5 services of 5 domains), and none is a
    value by itself.

    >>> begins_a_numbered_name("the cover of 4 Quiet Rooms", (13, 14)), begins_a_numbered_name("song 12 please", (5, 7))
    (True, False)
    """
    a, b = span
    return text[a:b].isdigit() and re.match(r"\s+[A-Z][a-z]", text[b:]) is not None


def _inside_a_sentence(text: str, at: int) -> bool:
    """Whether words come before `at` in its sentence: a capital there is no sentence's first."""
    before = text[:at].rstrip()
    return bool(before) and before[-1] not in ".!?"


def after_a_name_word(text: str, span: tuple[int, int]) -> str | None:
    """The word written with a capital right before the words, inside a sentence, that is no function
    word ("directed by Elaine May": "Elaine"); None where there is none. Such a word and the words after it
    are one name, whatever else the words could be read as (May is also a month).

    >>> after_a_name_word("a film by Elaine May", (17, 20)), after_a_name_word("Elaine May", (7, 10))
    ('Elaine', None)
    >>> after_a_name_word("a trip In May", (10, 13)), after_a_name_word("a trip on Friday, May 3", (18, 21))
    (None, None)
    """
    m = re.search(r"([A-Z][a-z]+)\s+$", text[:span[0]])
    if m is None or m.group(1).lower() in FUNCTION_WORDS:
        return None
    return m.group(1) if _inside_a_sentence(text, m.start()) else None


_GREETED = re.compile(r"\b(?:" + "|".join(sorted(map(re.escape, word_list("greetings")), key=len, reverse=True))
                      + r")(?:\s+(?:" + "|".join(map(re.escape, sorted(word_list("greetings", "after")))) + r"))?,?\s+$",
                      re.IGNORECASE)


def addressed(text: str, span: tuple[int, int]) -> bool:
    """Whether the words are whom the user greets or thanks, not a value: one word written with a capital
    right after a greeting (`lexicon/greetings.yaml`) and closed by a comma or the sentence's end ("Hello,
    Sam, ..."). On SGD train no such word is a value.

    >>> addressed("Hello, Sam, find me a song", (7, 10)), addressed("Hi Sam! Play a song", (3, 6))
    (True, True)
    >>> addressed("Hello, Paris is where I go", (7, 12)), addressed("Find me a song by Sam, please", (18, 21))
    (False, False)
    """
    a, b = span
    return (re.fullmatch(r"[A-Z][a-z]+", text[a:b]) is not None and re.match(r"\s*[,!.?]", text[b:]) is not None
            and _GREETED.search(text[:a]) is not None)
