"""Value normalisers named by a pack's argument types (`normalizer:` in pack.yaml).

Each takes the words the request gave and returns the value the API takes, or None when the words do not
give one (the argument then stays missing and the plan asks for it: never a guess).
"""

from __future__ import annotations

import difflib
import re
from typing import Callable

from pipeline.values.aliases import alias_of
from pipeline.values.lexicon import alternation, any_of, words_of
from pipeline.values.numbers import NUMBER_WORDS, format_amount, parse_amount, parse_number_words


def _said(part: str) -> tuple[str, ...]:
    """A list of the value readers' lexicon (`language/lexicon/value_words.yaml`)."""
    return words_of("value_words", part)


def _any(part: str) -> str:
    return any_of("value_words", part)

_TITLES = r"^(?:mr|mrs|ms|miss|mx|dr|prof|sir|madam|mister)\.?(?:\s+|$)"  # a title alone is no name
_EMAIL = re.compile(r"[a-z0-9._%+\-]+@[a-z0-9\-]+(?:\.[a-z0-9\-]+)+", re.IGNORECASE)
# An email address or a ten-digit phone number written anywhere in a text ("phone (312) 555-0187").
CONTACT = re.compile(_EMAIL.pattern + r"|\+?\(?\d{3}\)?[\s.-]?\d{3}[\s.-]?\d{4}\b", re.IGNORECASE)


def _words(text: str) -> str:
    """Lower case, punctuation folded to spaces: the form closed values are compared in."""
    return re.sub(r"[^a-z0-9]+", " ", text.lower().replace("_", " ")).strip()


def amount(text: str, **_) -> str | None:
    value = parse_amount(text)
    return format_amount(value) if value is not None and value > 0 else None


_DECIMAL = re.compile(r"[-+−]?\d+(?:\.\d+)?")


def decimal(text: str, **_) -> str | None:
    """A number that is no money (a latitude, a weight, a rating): as written, its sign and every decimal
    kept; a money amount rounds to cents and is never below zero, which would move a point on a map.

    >>> decimal("45.4702"), decimal(" -73.98561 "), decimal("lat 45.47"), decimal("12 kg")
    ('45.4702', '-73.98561', None, None)
    """
    text = text.strip().strip(",;:")
    return text.replace("−", "-").lstrip("+") if _DECIMAL.fullmatch(text) else None


def lowercase_text(text: str, **_) -> str | None:
    text = re.sub(r"\s+", " ", text).strip().strip(".,;:!?\"'").lower()
    text = re.sub("^" + _any("text_openers") + r"\s+", "", text).strip()
    return text or None


def person_name(text: str, **_) -> str | None:
    """A name as a person writes it; never read out of an email address."""
    if "@" in text:
        return None
    text = re.sub(r"\s+", " ", text).strip(" .,")
    text = re.sub(_TITLES, "", text, flags=re.IGNORECASE).strip()
    if not text or not re.fullmatch(r"[^\W\d_][^\W\d_'’\- ]*(?:['’\- ][^\W\d_]+)*", text):
        return None
    parts = re.split(r"([\s\-'’])", text)
    return "".join(p.capitalize() if p.islower() or p.isupper() and len(p) > 1 else p for p in parts)


def full_name(text: str, **_) -> tuple[str | None, str | None] | None:
    """'Jake Miller' -> (Jake, Miller); 'Mr. Davis' -> (None, Davis): a title goes with a family name;
    'Sarah' -> (Sarah, None). None when the words are no name."""
    titled = re.match(_TITLES, text.strip(), flags=re.IGNORECASE) is not None
    name = person_name(text)
    if name is None:
        return None
    parts = name.split(" ")
    if len(parts) > 3:
        return None
    if len(parts) == 1:
        return (None, parts[0]) if titled else (parts[0], None)
    return parts[0], parts[-1]


def email(text: str, **_) -> str | None:
    found = _EMAIL.findall(text)
    return found[0].lower() if len(found) == 1 else None


_PHONE_RUN = re.compile(r"\+?\(?\d[\d\s().\-]*\d\)?")  # digits and the marks a number is written with


def phone(text: str, **_) -> str | None:
    """A North American number as 415-555-0142; a number with another country code (written after a "+", or
    too long to be North American) keeps it, the E.164 way: "+44 7700 900123" is +447700900123.

    >>> phone("(415) 555-0142"), phone("+1 415 555 0142"), phone("+372 5551 2345"), phone("447700900123")
    ('415-555-0142', '415-555-0142', '+37255512345', '+447700900123')
    >>> phone("555-0142"), phone("+372 555"), phone("0044 7700 900123"), phone("ann-7 to +372 5551 2345")
    (None, None, None, '+37255512345')
    """
    runs = [m.group() for m in _PHONE_RUN.finditer(text) if len(re.sub(r"\D", "", m.group())) >= 7]
    if len(runs) != 1:  # no number, or two: "7 to +372 5551 2345" is one, "+372 5551 2345"
        return None
    written, digits = runs[0], re.sub(r"\D", "", runs[0])
    if len(digits) == 11 and digits.startswith("1") or len(digits) == 10 and not written.startswith("+"):
        return f"{digits[-10:-7]}-{digits[-7:-4]}-{digits[-4:]}"
    international = written.startswith("+") and len(digits) >= 8 or len(digits) >= 11
    return "+" + digits if international and len(digits) <= 15 and not digits.startswith(("0", "1")) else None


def e164(text: str, **_) -> str | None:
    """A phone number as E.164 writes it (ITU-T E.164: "+", the country code, the number; 8 to 15 digits), for
    an API whose field says it takes that form. Ten digits (or eleven after a 1) are read as `phone` reads
    them, North American; a number written with its "+", or too long for that, keeps its country code.

    >>> e164("+44 7700 900123"), e164("(415) 555-0142"), e164("+1 415 555 0142"), e164("447700900123")
    ('+447700900123', '+14155550142', '+14155550142', '+447700900123')
    >>> e164("555-0142"), e164("+0 555 0142")
    (None, None)
    """
    read = phone(text)
    return read if read is None or read.startswith("+") else "+1" + read.replace("-", "")


def choice(text: str, values: list[str], synonyms: dict[str, list[str]] | None = None, **_) -> str | None:
    """Match words to one value of a closed list: exact (any case), a listed synonym, a misspelling of
    either, or the longest value or synonym written inside the words. Unmatched words give None."""
    synonyms = synonyms or {}
    # Each phrase that names a value, in the folded form: the value itself and its synonyms.
    phrases: dict[str, str] = {}
    for value in values:
        phrases[_words(value)] = value
    for value, others in synonyms.items():
        for other in others:
            phrases.setdefault(_words(other), value)
    words = _words(text)
    if not words:
        return None
    if words in phrases:
        return phrases[words]
    close = difflib.get_close_matches(words, list(phrases), n=2, cutoff=0.85)
    if close and (len(close) == 1 or phrases[close[0]] == phrases[close[1]] or
                  difflib.SequenceMatcher(None, words, close[0]).ratio() >
                  difflib.SequenceMatcher(None, words, close[1]).ratio()):
        return phrases[close[0]]
    # A phrase written inside longer words ("forgot my password" -> password); the longest one wins,
    # misspelt single words included ("reconcilation").
    padded = f" {words} "
    inside = [p for p in phrases if f" {p} " in padded]
    if not inside:
        tokens = words.split()
        inside = [p for p in phrases if " " not in p and len(p) >= 6 and
                  any(difflib.SequenceMatcher(None, t, p).ratio() >= 0.88 for t in tokens)]
    if not inside:
        # Every content word of a multi-word phrase, in any order ("connect QuickBooks to my bank" ->
        # "connect to bank"); the phrase with the most content words wins.
        stems = {_stem(t) for t in words.split()}
        inside = [p for p in phrases if len(_content(p)) >= 2 and {_stem(w) for w in _content(p)} <= stems]
        if inside:
            most = max(len(_content(p)) for p in inside)
            winners = {phrases[p] for p in inside if len(_content(p)) == most}
            return winners.pop() if len(winners) == 1 else None
    if not inside:
        return None
    best = max(len(p) for p in inside)
    winners = {phrases[p] for p in inside if len(p) == best}
    return winners.pop() if len(winners) == 1 else None


def choice_spans(tokens: list[str], values: list[str], synonyms: dict[str, list[str]] | None = None,
                 ) -> list[tuple[int, int, str]]:
    """Where a closed value is named among the words: (first token, last token, value) for each phrase
    of a value or synonym written out (longest first, no overlaps), each misspelt single word, and each
    multi-word phrase whose content words all stand within a few words of each other."""
    phrases: dict[tuple[str, ...], str] = {}
    for value in values:
        phrases.setdefault(tuple(_words(value).split()), value)
    for value, others in (synonyms or {}).items():
        for other in others:
            phrases.setdefault(tuple(_words(other).split()), value)
    phrases.pop((), None)  # a value of no words ('' or '-' in a spec's enum) is named by no words
    folded = [_words(t) for t in tokens]
    found: list[tuple[int, int, str]] = []
    taken: set[int] = set()
    for phrase in sorted(phrases, key=len, reverse=True):
        for i in range(len(folded) - len(phrase) + 1):
            span = range(i, i + len(phrase))
            if tuple(folded[i:i + len(phrase)]) == phrase and not taken & set(span):
                found.append((i, i + len(phrase) - 1, phrases[phrase]))
                taken |= set(span)
    for i, word in enumerate(folded):
        if i in taken or len(word) < 6:
            continue
        close = [p for p in phrases if len(p) == 1 and difflib.SequenceMatcher(None, word, p[0]).ratio() >= 0.88]
        if len({phrases[p] for p in close}) == 1:
            found.append((i, i, phrases[close[0]]))
    stems = [_stem(w) for w in folded]
    for phrase, value in phrases.items():
        content = [_stem(w) for w in phrase if w not in _STOPWORDS]
        if len(content) < 2 or any(v == value for *_, v in found):
            continue
        where = [stems.index(w) for w in content if w in stems]
        # Words another phrase already read are not read again ("no hot tub" is no "hot tub").
        if len(where) == len(content) and max(where) - min(where) < 8 and not taken & set(where):
            found.append((min(where), max(where), value))
    return sorted(found)


_STOPWORDS = set("a an the to of for in on at with and or my me i how do does can you your our we it is".split())


def _content(phrase: str) -> list[str]:
    return [w for w in phrase.split() if w not in _STOPWORDS]


def _stem(word: str) -> str:
    """Crude suffix folding, enough to meet 'deleted' with 'delete' and 'charges' with 'charge'."""
    for suffix in ("ing", "ed", "es", "s", "e"):
        if len(word) > len(suffix) + 2 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


_NO_COUNT = re.compile(rf"\d\s*(?::|{alternation(_said('meridiem_marks') + _said('ordinal_suffixes'))}\b)|[$/]")


def integer(text: str, **_) -> str | None:
    """A count as people write it: '6', 'six of us', 'a party of 4', 'just the two of us' -> the number.
    A time, a date or an amount of money is no count; neither is a text with two different numbers."""
    lowered = text.lower()
    if _NO_COUNT.search(lowered):
        return None
    counted = re.search(rf"([a-z]+|\d+)\s+{_any('party_words')}\b", lowered)
    if counted and parse_number_words(counted.group(1)):  # "eight of us, five adults and three kids"
        lowered = counted.group(0)
    numbers = {parse_number_words(token) for token in re.findall(r"[a-z]+|\d+", lowered)} - {None}
    numbers = {n for n in numbers if n == n.to_integral_value() and n >= 0}  # "zero bags" counts none
    return str(int(numbers.pop())) if len(numbers) == 1 else None


_HOUR_WORDS = {w: i for w, i in NUMBER_WORDS.items() if i <= 12}  # the hours of a clock in words
_AT, _CLOCK = _any("at"), _any("clock_words")
_PARTS_OF_DAY = _said("morning_hours") + _said("evening_hours")
# Words that say they are a time ("8pm", "7:30", "at 7", "noon"): a bare number is a count.
TIME_MARK = re.compile(rf"\d\s*(?::\d|[ap]\.?m\b|{_CLOCK})|\b{_AT}\s+(?:\d{{1,2}}|"
                       + "|".join(w for w in _HOUR_WORDS if _HOUR_WORDS[w]) + rf")\b|\b{_any('time_marks')}\b|"
                       + alternation(_said("morning_hours") + tuple(w for w in _said("evening_hours") if w.startswith("in "))),
                       re.IGNORECASE)
_TIME = re.compile(
    rf"(?:(?P<quarter>{alternation(_said('quarter_hour') + _said('half_hour'))})\s+"
    rf"(?P<rel>{alternation(_said('after_the_hour') + _said('before_the_hour'))})\s+)?"
    r"(?P<hour>\d{1,2}|" + "|".join(_HOUR_WORDS) + r")"
    rf"(?:\s*[:.]\s*(?P<minute>\d{{2}}))?(?:\s*{_CLOCK})?"
    rf"\s*(?P<meridiem>a\.?m\.?|p\.?m\.?|{alternation(_PARTS_OF_DAY)})?\b")


def wholly_a_time(text: str) -> bool:
    """Whether the words are a time and nothing more ("at 9:30 pm", "noon", "17:00"; not "9:00 and after").

    >>> wholly_a_time("at 9:30 pm"), wholly_a_time("17:00"), wholly_a_time("9:00 and ending"), wholly_a_time("at 12")
    (True, True, False, True)
    """
    lowered = re.sub(r"\s+", " ", text.lower().strip())
    whole = rf"(?:{_AT} )?(?:" + _TIME.pattern + "|" + _any("whole_times") + ")"
    return bool(TIME_MARK.search(lowered)) and re.fullmatch(whole, lowered) is not None


def time_of_day(text: str, **_) -> str | None:
    """A time as 24-hour HH:MM: '7:30 in the evening' -> 19:30, '8pm', 'noon', 'quarter to seven pm'
    -> 18:45. An hour with nothing saying morning or evening is read as written (7 -> 07:00)."""
    lowered = re.sub(r"(?<=\bo)[’\"]", "'", text.lower())  # "o’clock", and "o"clock" typed for it
    if re.search(rf"\d\s*(?:{_any('range_joins')}|-)\s*\d|\b{_any('range_openers')}\b", lowered):
        return None  # a range or a choice of times is no one time
    if re.search(rf"\b{_any('noon')}\b", lowered):
        return "12:00"
    if re.search(rf"\b{_any('midnight')}\b", lowered):
        return "00:00"
    found = [m for m in _TIME.finditer(lowered) if m.group("minute") or m.group("meridiem") or m.group("quarter")
             or any(w in m.group(0) for w in _said("clock_words"))
             or re.fullmatch(rf"\s*(?:{_AT}\s+)?" + re.escape(m.group(0).strip()) + r"\s*", lowered)
             or re.search(rf"\b{_AT}\s+" + re.escape(m.group(0).strip()) + r"\b", lowered)]
    if len(found) != 1:
        return None
    match = found[0]
    hour = int(match.group("hour")) if match.group("hour").isdigit() else _HOUR_WORDS[match.group("hour")]
    minute = int(match.group("minute") or 0)
    if hour > 23 or minute > 59:
        return None
    if match.group("quarter"):
        shift = 15 if match.group("quarter") in _said("quarter_hour") else 30
        if match.group("rel") in _said("before_the_hour"):
            hour, minute = (hour - 1) % 24, 60 - shift
        else:
            minute = shift
    meridiem = (match.group("meridiem") or "").replace(".", "")
    evening = meridiem.startswith("p") or meridiem in _said("evening_hours") \
        or (not meridiem and re.search(rf"\b{_any('evening_words')}\b", lowered) is not None)
    if evening and hour < 12:
        hour += 12
    elif meridiem.startswith("a") and hour == 12:
        hour = 0
    return f"{hour:02d}:{minute:02d}"


def title_text(text: str, **_) -> str | None:
    """A proper name as written, each word capitalised where none is: 'casa lupita' -> 'Casa Lupita'; one
    written with capitals keeps the writer's ('Salt and the Sea'); a word that is no plain word
    ('end_user_ip', 'ci-deploy', 'v2') is a machine's name, kept as written. Another name of a value learned
    from SGD (`aliases`) is that value: 'SF' -> 'San Francisco'.

    >>> title_text("casa lupita"), title_text("end_user_ip"), title_text("ci-deploy"), title_text("Salt and the Sea")
    ('Casa Lupita', 'end_user_ip', 'ci-deploy', 'Salt and the Sea')

    A name is written with a letter, or is one word of four digits or more, a code as `digits` reads one
    (a film called "1917"); a shorter number is a count, and numbers with other words are no name:

    >>> title_text("730215"), title_text("42"), title_text("12 30"), title_text("$5")
    ('730215', None, None, None)
    """
    text = re.sub(r"\s+", " ", text).strip().strip(".,;:!?\"")
    if not text or not re.search(r"[^\W\d_]", text) and not (text.isdigit() and len(text) >= 4):
        return None
    if (known := alias_of(text)) is not None:
        return known
    if any(c.isupper() for c in text):
        return text
    return " ".join(w[:1].upper() + w[1:] if w[:1].islower() and w.isalpha() else w for w in text.split(" "))


def digits(text: str, **_) -> str | None:
    """An identifier written with spaces or dashes: '7731 0056', '4482-0017' -> the digits alone. Words
    around it are allowed ('my number is ...'); two separate numbers are not."""
    groups = re.findall(r"\d[\d\s\-]*\d|\d", text)
    if len(groups) != 1:
        return None
    found = re.sub(r"\D", "", groups[0])
    return found if len(found) >= 4 else None


# One word with a digit in it, letters, digits and the marks ids are joined with; a number sign before it
# says "number", it is no part of the id.
IDENTIFIER = re.compile(r"(?<![\w#.:/-])#?([A-Za-z0-9](?:[\w.:-]*[A-Za-z0-9])?)(?![\w-]|[.:/-]\w)")


def written_as_an_id(word: str) -> bool:
    """Whether one word is written the way identifiers are and words of prose are not: with a digit in it,
    but no number with decimals (an amount, a weight, a latitude: in the request corpus's 24 APIs with
    values, 16 such values, none an identifier), or words joined by an underscore ('zn_us_west': of 25
    such words in the corpus's requests to 10 APIs, each was a value as written, a key, a user name).

    >>> [written_as_an_id(w) for w in ("INV2-7F3K", "1183", "89.50", "zn_us_west", "Rex", "_x")]
    [True, True, False, True, False, False]
    """
    if re.fullmatch(r"\d+\.\d+", word):
        return False
    return bool(re.search(r"\d", word) or re.search(r"[^\W\d_]_[^\W_]", word))


def identifier(text: str, **_) -> str | None:
    """An identifier as an API takes it, written as one word the way ids are (`written_as_an_id`): a uuid
    whole, 'INV2-7F3K', '#1183' -> '1183'. Words around it are allowed ('order #1183'); a name ('Rex') or
    two ids are not.

    >>> identifier("cancel 4ef9a417-02e9-4d39-ad75-9611e0fcc33c"), identifier("order #1183"), identifier("Rex")
    ('4ef9a417-02e9-4d39-ad75-9611e0fcc33c', '1183', None)
    >>> identifier("zone zn_us_west"), identifier("a refund of 20.00")
    ('zn_us_west', None)
    """
    found = [m.group(1) for m in IDENTIFIER.finditer(text) if written_as_an_id(m.group(1))]
    return found[0] if len(found) == 1 else None


# A web address as written: a scheme and what follows up to a space (the punctuation ending a sentence is
# no part of it), or one beginning "www.".
WEB_ADDRESS = re.compile(r"\b(?:https?|ftp)://[^\s<>\"'`]+|\bwww\.[^\s<>\"'`]+", re.IGNORECASE)


def web_address_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of each web address of the text, the punctuation after it left out.

    >>> web_address_spans("see https://x.example/a?b=1. or www.y.example")
    [(4, 27), (32, 45)]
    """
    return [(m.start(), m.start() + len(m.group().rstrip(".,;:!?)]}"))) for m in WEB_ADDRESS.finditer(text)]


def web_address(text: str, **_) -> str | None:
    """A web address as an API takes it, whole ('https://cdn.example.org/a/b.png?s=2'); words around it are
    allowed; none, or two, give none (which of them is not for the reader to guess).

    >>> web_address("photo at https://x.example/tom.jpg."), web_address("no link here")
    ('https://x.example/tom.jpg', None)
    """
    found = web_address_spans(text)
    return text[found[0][0]:found[0][1]] if len(found) == 1 else None


def search_text(text: str, **_) -> str | None:
    """The words a search or a list is told to look for, as written, lower case or not ('sprint planning',
    'Night Lights'): no name to capitalise, no word to fold.

    >>> search_text(" sprint planning. "), search_text("Night Lights"), search_text('"')
    ('sprint planning', 'Night Lights', None)
    """
    text = re.sub(r"\s+", " ", text).strip().strip(".,;:!?\"'“”‘’")
    return text or None


NORMALIZERS: dict[str, Callable[..., str | None]] = {
    "amount": amount,
    "decimal": decimal,
    "lowercase_text": lowercase_text,
    "person_name": person_name,
    "email": email,
    "phone": phone,
    "e164": e164,
    "choice": choice,
    "integer": integer,
    "time": time_of_day,
    "title_text": title_text,
    "search_text": search_text,
    "digits": digits,
    "identifier": identifier,
    "url": web_address,
    # dates are read by the date helpers, which need both ends of a span and `today`
    "date": lambda text, **_: None,
    "future_date": lambda text, **_: None,  # a day ahead (a booking): "this Saturday" is the coming one
    "date_time": lambda text, **_: None,  # a day and its time (`values.moments`), read against `today` too
}
