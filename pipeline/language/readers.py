"""Value readers, one per normaliser type, in one table (`READERS`): what words each type of value can be
read from, and what they read as. A reader finds, per argument, every span its type reads (`Readings`:
the words and the value); it also reads a whole answer (`whole`: None when the words are no such value).
The table also says how the type behaves downstream: its `family` (a day and a period are both dates), whether
words that read are the value once present (`forced`: a date, an amount), and whether any words could be one
(`free`: a name, free text), so no consumer compares normaliser names.

>>> set(NORMALIZERS) <= set(READERS), sorted(set(READERS) - set(NORMALIZERS))
(True, ['full_name', 'period'])
>>> from pipeline.packs.pack import ArgumentType
>>> reader("amount").whole("75 bucks", ArgumentType(normalizer="amount"), date(2026, 1, 1))
'75.00'
>>> reader("date").whole("march 2025", ArgumentType(normalizer="date"), date(2026, 1, 1))
(datetime.date(2025, 3, 1), datetime.date(2025, 3, 31))
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from functools import cached_property, lru_cache

from pipeline.language.names import PART_LABEL, could_be_name, given_by_full_name, lone, lone_name_part, name_part
from pipeline.language.phrases import (addresses, after_a_name_word, begins_a_name, begins_a_numbered_name, overlaps, phrases,
                                      whole_name_with_number)
from pipeline.language.readings import Readings
from pipeline.language.words import EDGE_WORDS, FUNCTION_WORDS, PERSON_NOUNS, pack_word_list, pack_words, word_list
from pipeline.values import dates, moments
from pipeline.values.normalizers import (_TITLES, IDENTIFIER, NORMALIZERS, TIME_MARK, choice_spans, full_name, web_address_spans,
                                         written_as_an_id)
from pipeline.values.numbers import CURRENCY_SYMBOLS, format_amount, parse_amount, written_as_money
from pipeline.values.lexicon import alternation, any_of
from pipeline.values.spans import TOKEN, maximal, request_spans

Span = tuple[int, int]

_ISO_DATE = re.compile(r"(?:19|20)\d\d-[01]?\d-[0-3]?\d")
_CUT_CLOCK = re.compile(r":\d")  # what follows an hour cut off from its minutes
_PHONE_LIKE = re.compile(r"\+?[\d\s().\-]{7,}")

# A day after "by" or "before" is when the user needs something, not a value ("the auditor wants it by
# monday"); and "now" alone is the moment of asking ("what i want now is ...").
_DEADLINE = re.compile(rf"\b{any_of('dates', 'deadline_words')}\s+(?:{any_of('dates', 'deadline_determiners')}\s+)?$",
                       re.IGNORECASE)
# The time of an event the request tells of ("our board meeting on Friday") is when it happens, not a
# period of the records asked for (the event nouns: English ones and the pack's own, `lexicon.event_nouns`).
# So is the time of a talk the user tells of, after its verb and whom it was with ("i phoned the bank
# yesterday"), but not after what it was about ("i phoned about the charge from yesterday").
@lru_cache(maxsize=64)
def _event_time_pattern(nouns: frozenset[str]) -> re.Pattern:
    def part(name: str) -> str:
        return any_of("event_nouns", name)
    return re.compile(rf"(?:\b{alternation(nouns)}s?\s+(?:{part('copulas')}\s+)?"
                      rf"|\b{part('talk_verbs')}(?:\s+(?!{part('talk_topics')}\b)[\w'’]+){{0,3}}?\s+)"
                      rf"(?:{part('time_joins')}\s+)?(?:{part('articles')}\s+)?$", re.IGNORECASE)


_OF_RECORDS = re.compile(rf"{any_of('event_nouns', 'period_joins')}\b", re.IGNORECASE)


def _event_time(pack, text: str, span: Span) -> bool:
    """Whether the span is the time of an event the words just before it name ("the meeting on Friday"),
    not a period it is for ("the meeting notes for May")."""
    told = _event_time_pattern(pack_word_list(pack, "event_nouns")).search(text[:span[0]])
    return told is not None and not _OF_RECORDS.match(text[span[0]:span[1]])


def _is_contact(span: str) -> bool:
    """A phone number, an email address or a long identifier ("0072 5518") and nothing else."""
    if "@" in span:
        return " " not in span.strip() and NORMALIZERS["email"](span) is not None
    return (bool(_PHONE_LIKE.fullmatch(span.strip())) and len(re.sub(r"\D", "", span)) >= 7
            and not _ISO_DATE.fullmatch(span.strip()))  # 1990-11-02 is a day, written the ISO way


def _edge_word_adds_nothing(span: str) -> bool:
    """Whether the span begins or ends with a word that is no part of its amount ("for 500", not "a grand")."""
    words = TOKEN.findall(span)
    if words[-1].lower() in EDGE_WORDS:
        return True
    if words[0].lower() in {"a", "an"}:  # "a grand" is 1000; "a 500" is 500
        return parse_amount(span.split(None, 1)[1] if " " in span else "", whole=True) is not None
    return words[0].lower() in EDGE_WORDS


def smallest(readable: list[Span], values: dict) -> list[Span]:
    """The words that make each reading: no span that reads the same with fewer words ("ring", not "give
    me a ring"), and none inside a span that reads otherwise ("call" inside "video call"; "10 in the morning"
    inside "quarter to 10 in the morning", itself read by "quarter to 10" with fewer words)."""
    inside = lambda a, b: a != b and b[0] <= a[0] and a[1] <= b[1]  # noqa: E731
    minimal = [a for a in readable if not any(inside(b, a) and values[b] == values[a] for b in readable)]

    def outread(a: Span) -> bool:  # a wider reading disagrees, and agrees with another that shares a's words
        return any(inside(a, b) and values[b] != values[a] and (b in minimal or any(
            inside(c, b) and values[c] == values[b] and overlaps(c, [a]) for c in minimal)) for b in readable)
    return [a for a in minimal if not outread(a)]


def _without_breakdown(counts: list[Span], values: dict) -> list[Span]:
    """A count that is the sum of the others is the total, and the others its parts ("nine people,
    five grown-ups and four children"): only the total is a value."""
    numbers = {sp: int(values[sp]) for sp in counts if str(values[sp]).isdigit()}
    for sp, total in numbers.items():
        parts = [n for other, n in numbers.items() if other != sp]
        if len(parts) >= 2 and sum(parts) == total:
            return [sp]
    return counts


class Scene:
    """One text as every reader sees it: its spans, and the spans already known to be a day, an amount, a
    time or a contact (whose words are no free text). Each part is worked out once, when first asked for."""

    def __init__(self, pack, text: str, today: date):
        self.pack, self.text, self.today = pack, text, today
        self.spans = request_spans(text)
        self.tokens = list(TOKEN.finditer(text))

    def words(self, span: Span) -> str:
        return self.text[span[0]:span[1]]

    @cached_property
    def web_addresses(self) -> list[Span]:
        """Each web address, whole (its words may be more than a span holds)."""
        return web_address_spans(self.text)

    @cached_property
    def contacts(self) -> list[Span]:
        """The digits of a phone number, an email address or a web address: no date, amount or name."""
        return [sp for sp in self.spans if _is_contact(self.words(sp)) or overlaps(sp, self.web_addresses)]

    @cached_property
    def plain(self) -> list[Span]:
        return [sp for sp in self.spans if not overlaps(sp, self.contacts)]

    @cached_property
    def periods(self) -> dict[Span, dates.Period]:
        """A number read as a year far from ours ("cost me 2400", "booking RD-8830") is no period, nor a
        month's name that ends a name ("directed by Elaine May": `_month_in_a_name`)."""
        read = {sp: dates.resolve_period(self.words(sp), self.today) for sp in self.plain
                if not self._month_in_a_name(sp)}
        return {sp: p for sp, p in read.items() if p is not None and 1900 <= p.start.year <= 2199}

    def _month_in_a_name(self, span: Span) -> bool:
        """A month's name alone, right after a word written with a capital inside a sentence that is no
        period itself ("Elaine May", not "Friday May"): on SGD train every such month is part of a name."""
        if self.words(span).lower().rstrip(".") not in dates.MONTHS:
            return False
        word = after_a_name_word(self.text, span)
        return word is not None and dates.resolve_period(word, self.today) is None

    @cached_property
    def timely(self) -> list[Span]:
        return maximal(list(self.periods))

    @cached_property
    def readable_periods(self) -> list[Span]:
        """The periods that are values: not a deadline's day, not the time of an event told of, not "now"."""
        return [sp for sp in self.timely if not _DEADLINE.search(self.text[:sp[0]]) and not _event_time(self.pack, self.text, sp)
                and self.words(sp).lower() != "now"]

    @cached_property
    def amounts(self) -> list[Span]:
        return [sp for sp in self.plain if parse_amount(self.words(sp), whole=True) is not None
                and not _edge_word_adds_nothing(self.words(sp))]

    @cached_property
    def times(self) -> list[Span]:
        read = {sp: NORMALIZERS["time"](self.words(sp)) for sp in self.plain if TIME_MARK.search(self.words(sp))}
        return smallest([sp for sp, t in read.items() if t is not None], read)

    @cached_property
    def claimed(self) -> list[Span]:
        """Words of a day (a deadline's too), an amount, a contact or a time: no free text."""
        return self.timely + self.amounts + self.contacts + self.times

    @cached_property
    def whole_names(self) -> list[Span]:
        """Whole names of people ("Emma Wilson", not "Emma"); a lone word labelled as one part ("last name
        Shah") is that part, not a whole name."""
        text = self.text
        return maximal([(a, b) for a, b in self.spans if len(TOKEN.findall(text[a:b])) <= 3
                        and could_be_name(self.pack, text, a, b) and full_name(text[a:b]) is not None
                        and not (lone(text[a:b]) and PART_LABEL.search(text[:a]))])

    @cached_property
    def person_names(self) -> list[Span]:
        """Capitalised whole names, where the pack names people at all: no service or goods."""
        if not any(extra.normalizer == "full_name" for extra in self.pack.spec.ir_extra.values()):
            return []
        return [sp for sp in self.whole_names if all(w[:1].isupper() for w in TOKEN.findall(self.words(sp)))]


# Each reader: (scene, argument name, its spec) -> the argument's readings.

def _period_spans(scene: Scene, name: str, spec) -> Readings:
    found = Readings(name, scene.text)
    for sp in scene.readable_periods:
        found.add(sp)
    return found


def _full_name_spans(scene: Scene, name: str, spec) -> Readings:
    """The whole name only: its parts are what the part arguments are for."""
    found = Readings(name, scene.text)
    for sp in scene.whole_names:
        found.add(sp)
    return found


def _date_spans(scene: Scene, name: str, spec) -> Readings:
    """A day, or a period's first (or, for an end date, last) day where a period-like fact gives the argument."""
    found = Readings(name, scene.text)
    given_by_period = any(name in extra.gives for extra in scene.pack.spec.ir_extra.values())
    for sp in scene.readable_periods:
        p = scene.periods[sp]
        if not given_by_period and p.start != p.end:  # a day, unless a period gives the argument
            continue
        found.add(sp, dates.format_date(p.end if name == "end_date" else p.start))
    return found


def _lowercase_text_spans(scene: Scene, name: str, spec) -> Readings:
    found, text = Readings(name, scene.text), scene.text
    spans = maximal(phrases(scene.pack, text, scene.spans, scene.claimed))
    # A person's name is no service while the request names something else ("invoice Ann Lee for
    # the tile job"); alone it may be one ("bill them for Logo Design").
    spans = [sp for sp in spans if not overlaps(sp, scene.person_names)] or spans
    # Nor is a word for a person a thing: "an invoice for a client" says whom it is for, not what.
    spans = [sp for sp in spans if not set(TOKEN.findall(text[sp[0]:sp[1]].lower())) <= PERSON_NOUNS]
    for a, b in spans:
        found.add((a, b), text[a:b].lower())
    return found


_NAME_RUN = r"[A-Z][\w'’&-]*(?:\s+[A-Z][\w'’&-]*)*"  # capitalised words in a row ("Tom Berg", "Quiet Rooms")


def _title_text_spans(scene: Scene, name: str, spec) -> Readings:
    """A proper name of a thing ("Bella Notte", "my landlord Tom Berg"): whole phrases, and the capitalised
    run inside one ("Tom Berg"); capitalised runs joined by "and" ("Salt and Pepper", `_JOINED_TITLE`)
    whole, not their parts, and so a name written in quotes ("Scaling Postgres at the Edge"); an address or
    a name with a number in it, whole."""
    found, text, pack = Readings(name, scene.text), scene.text, scene.pack
    whole = [w for w in TOKEN.findall(text) if w.lower() not in FUNCTION_WORDS]
    for a, b in maximal(phrases(pack, text, scene.spans, scene.claimed)):
        words = TOKEN.findall(text[a:b])
        if all(difflib.get_close_matches(w.lower(), pack_words(pack), n=1, cutoff=0.85) for w in words):
            continue  # the pack's own words, or a misspelling of them ("reservaton")
        if text[a:b].islower() and words != whole:  # lower case: only as a whole answer ("casa lupita")
            continue
        if text[max(a - 4, 0):a] == "The " and text[a:a + 1].isupper():
            a -= 4  # a capitalised "The" is part of the name ("The Blue Door")
        found.add((a, b))
        for run in re.finditer(_NAME_RUN, text[a:b]):
            found.add((a + run.start(), a + run.end()))
    joined = [run.span() for run in _JOINED_TITLE.finditer(text)]
    joined += [quoted_span(q) for q in QUOTED.finditer(text)]  # a name in quotes is written whole, however it runs
    for a, b in joined:  # one name: its parts are none
        found.items = [r for r in found.items if not (a <= r.start and r.end <= b)]
        found.add((a, b))
    for sp in addresses(text) + whole_name_with_number(text):  # its number is no amount or count
        found.add(sp)
    for number in re.finditer(r"(?<![\w$€£#.,:/-])\d+(?=\s+[A-Z])", text):  # "4 Quiet Rooms": one name, not its part
        run = re.match(r"\s+" + _NAME_RUN, text[number.end():])
        if not begins_a_numbered_name(text, number.span()) or overlaps(number.span(), scene.timely + scene.times):
            continue
        a, b = number.start(), number.end() + run.end()
        found.items = [r for r in found.items if not (a < r.start and r.end <= b)]
        found.add((a, b))
    return found


def _more_of_a_name(words: str) -> bool:
    """Whether words after a name go on with it ("maintenance" of "Website maintenance"), not only a
    possessive's "'s" or words of the sentence around it ("and I")."""
    tokens = TOKEN.findall(words)
    return bool(tokens) and all(len(t) > 1 and t.lower() not in FUNCTION_WORDS for t in tokens)


def _search_text_spans(scene: Scene, name: str, spec) -> Readings:
    """What a search is told to look for: an email address or a phone number the words write ("the customer
    with the email ana@x.org"), else a name, as far as it goes (`_title_text_spans`: "Website maintenance",
    not "Website"), else, where the words write none, a phrase in lower case ("boards about sprint
    planning"), as written."""
    contacts = [sp for sp in maximal(scene.contacts) if not overlaps(sp, scene.web_addresses)]
    if contacts:
        found = Readings(name, scene.text)
        for sp in contacts:
            found.add(sp)
        return found
    found = _title_text_spans(scene, name, spec)
    found.items = [r for r in found.items if not any(o.start == r.start and o.end > r.end  # "Website" of "Website
                                                     and _more_of_a_name(scene.text[r.end:o.end]) for o in found.items)]
    if not found.items:
        for reading in _lowercase_text_spans(scene, name, spec).items:
            if not any(re.search(r"\d", m.group(1)) for m in IDENTIFIER.finditer(reading.text)):
                found.add(reading.span)  # an identifier ("4ef9a417-02e9-…") is no words to search by
    return found


def _future_date_spans(scene: Scene, name: str, spec) -> Readings:
    """A day ahead: the smallest words naming it, and the day."""
    found = Readings(name, scene.text)
    ahead = {sp: dates.resolve_future_day(scene.words(sp), scene.today) for sp in scene.plain}
    for sp in maximal([sp for sp, d in ahead.items() if d is not None and not TIME_MARK.search(scene.words(sp))]):
        found.add(sp, dates.format_date(ahead[sp]))
    return found


_MOMENT_JOIN = re.compile(rf"{any_of('dates', 'moment_joins')}\b", re.IGNORECASE)


def _date_time_spans(scene: Scene, name: str, spec) -> Readings:
    """A moment (`values.moments`): the longest words naming a day and its time, or a day alone."""
    found = Readings(name, scene.text)
    read = {sp: moments.moment(scene.words(sp), scene.today) for sp in scene.plain
            if not _MOMENT_JOIN.match(scene.words(sp))}  # "on June 12": the day's words only
    for sp in maximal([sp for sp, value in read.items() if value is not None]):
        found.add(sp, read[sp])
    return found


def _digits_spans(scene: Scene, name: str, spec) -> Readings:
    """An identifier: digits alone, not a year of a date nor a time."""
    found, read = Readings(name, scene.text), NORMALIZERS["digits"]
    for sp in maximal([sp for sp in scene.spans if read(scene.words(sp)) is not None
                       and re.fullmatch(r"[\d\s\-]+", scene.words(sp))
                       and not overlaps(sp, scene.readable_periods + scene.times)]):
        found.add(sp, read(scene.words(sp)))
    return found


def _identifier_spans(scene: Scene, name: str, spec) -> Readings:
    """An identifier: each word written as ids are (`written_as_an_id`) as written (a uuid whole, '#1183' as
    1183), not a day, a time, an amount, an email address, a phone number or the number a name begins with
    ("4 Quiet Rooms")."""
    found = Readings(name, scene.text)
    taken = scene.readable_periods + scene.times
    for match in IDENTIFIER.finditer(scene.text):
        value = match.group(1)
        money = scene.text[max(match.start() - 1, 0):match.start()] in tuple(CURRENCY_SYMBOLS)
        if not written_as_an_id(value) or money or overlaps(match.span(), taken) or \
                begins_a_numbered_name(scene.text, match.span()) or \
                NORMALIZERS["email"](value) or NORMALIZERS["phone"](value):
            continue
        found.add(match.span(), value)
    return found


def _read_smallest(scene: Scene, pool: list[Span], normalize) -> tuple[list[Span], dict]:
    values = {sp: normalize(scene.words(sp)) for sp in pool}
    return smallest([sp for sp in pool if values[sp] is not None], values), values


# Words in quotes: double, curly, or single where the quote is no apostrophe (it opens after no letter and
# closes before none: "set the title to 'Q3 roadmap'", not "it's the users' list"). On the REST request corpus
# 115 single-quoted spans in requests to 25 APIs are all values; SGD train's user turns hold none.
QUOTED = re.compile(r'"([^"\n]{2,80})"|“([^”\n]{2,80})”'
                    r"|(?<![\w'’])['‘](?=\S)((?:[^\n'’]|['’](?=\w)){2,80}?)(?<=\S)['’](?!\w)")


def quoted_span(match: re.Match) -> tuple[int, int]:
    """The words inside the quotes.

    >>> text = "post 'standup moved to 10:30' and don't wait, then 'don't panic'"
    >>> [text[slice(*quoted_span(m))] for m in QUOTED.finditer(text)]
    ['standup moved to 10:30', "don't panic"]
    """
    return next(match.span(g) for g in (1, 2, 3) if match.group(g) is not None)


_CAPITALISED_RUN = r"[A-Z][\w'’-]*(?:\s+[A-Z][\w'’-]*)*"
_JOINED_TITLE = re.compile(  # "Salt and Pepper", "Hounds and the Hare": one name (lexicon/title_joins.yaml)
    _CAPITALISED_RUN + r"\s+(?:" + "|".join(re.escape(w) for w in sorted(word_list("title_joins"))) + r")\s+"
    r"(?:(?i:" + "|".join(sorted(word_list("title_joins", "articles"))) + r")\s+)?"
    r"(?!I\b)" + _CAPITALISED_RUN)  # "Blue Moon and I want ...": "I" is the speaker, no part of a name
_SHORT_YEAR = re.compile(r"(?<!\w)['’](\d{2})(?![\w'’])")


def _integer_spans(scene: Scene, name: str, spec) -> Readings:
    """A count outside phone numbers, never part of a time or a date; only the total of a breakdown. A year
    argument reads years instead: four digits, the year a period names ("2013", "nine years back"), or two
    digits after an apostrophe, the latest such year not after this one ("'15" is 2015, "'98" 1998)."""
    found = Readings(name, scene.text)
    # A number word beginning a name ("One Market Street") and a number after a number sign ("#35") name
    # something: no span holding one is a count.
    named = [t.span() for t in scene.tokens if NORMALIZERS["integer"](t.group()) is not None
             and (begins_a_name(scene.text, t.span()) or scene.text[:t.start()].endswith("#"))]
    pool = [sp for sp in scene.plain if not overlaps(sp, scene.times + scene.readable_periods + named)]
    read, values = _read_smallest(scene, pool, NORMALIZERS["integer"])
    year = "year" in name.lower().split("_")
    for sp in _without_breakdown(read, values):
        if not year or len(values[sp]) == 4:  # "15" is no year; "'15" is read below
            found.add(sp, values[sp])
    if year:
        for sp in scene.readable_periods:
            p = scene.periods[sp]
            if p.start == date(p.start.year, 1, 1) and p.end == date(p.start.year, 12, 31):
                found.add(sp, str(p.start.year), as_written=scene.words(sp).strip().isdigit())
        century = scene.today.year - scene.today.year % 100
        for m in _SHORT_YEAR.finditer(scene.text):  # the count normaliser reads "nine years back" as 9, "'15" as 15
            short = century + int(m.group(1))
            found.add(m.span(), str(short if short <= scene.today.year else short - 100), as_written=False)
    return found


def _time_spans(scene: Scene, name: str, spec) -> Readings:
    """A time says it is one ("8pm", "7:30", "at 7", "noon"): a bare number is a count. Nor is the hour of a
    clock time written with its minutes a time of its own ("at 8" of "at 8:30")."""
    found = Readings(name, scene.text)
    pool = [sp for sp in scene.plain if TIME_MARK.search(scene.words(sp)) and not _CUT_CLOCK.match(scene.text, sp[1])]
    read, values = _read_smallest(scene, pool, NORMALIZERS["time"])
    for sp in read:
        found.add(sp, values[sp])
    return found


def _amount_spans(scene: Scene, name: str, spec) -> Readings:
    """Spans that are wholly an amount, the longest ones ("1,250", not "250"), outside dates."""
    found = Readings(name, scene.text)
    for sp in maximal([sp for sp in scene.amounts if not overlaps(sp, scene.readable_periods)]):
        found.add(sp, format_amount(parse_amount(scene.words(sp), whole=True)))
    return found


def _decimal_spans(scene: Scene, name: str, spec) -> Readings:
    """Each number written on its own, its sign with it ("-73.9857"), outside days and times."""
    found = Readings(name, scene.text)
    for number in re.finditer(r"(?<![\w.,/:-])[-+−]?\d+(?:\.\d+)?(?![\w/:]|[.,]\d)", scene.text):
        if not overlaps(number.span(), scene.timely + scene.times + scene.web_addresses):
            found.add(number.span(), NORMALIZERS["decimal"](number.group()))
    return found


def choice_readings(spec, text: str, tokens: list[re.Match], found: Readings) -> Readings:
    """The words that name a listed value ("ring" -> phone, "video call" -> video), not a sentence around
    them, and the values they name."""
    for first, last, value in choice_spans([t.group() for t in tokens], spec.values, spec.synonyms):
        found.add((tokens[first].start(), tokens[last].end()), value)
    return found


def _choice_spans(scene: Scene, name: str, spec) -> Readings:
    return choice_readings(spec, scene.text, scene.tokens, Readings(name, scene.text))


def _normalised(scene: Scene, spec) -> dict[Span, object]:
    normalize = NORMALIZERS[spec.normalizer]
    return {sp: normalize(scene.words(sp), values=spec.values, synonyms=spec.synonyms) for sp in scene.spans}


def _person_name_spans(scene: Scene, name: str, spec) -> Readings:
    """Never the words of a date, a time or a contact; a name on its own of one word is only the part of a
    whole name it is ("Maria", "Mr. Chen")."""
    found, values = Readings(name, scene.text), _normalised(scene, spec)
    readable = [sp for sp in scene.spans if values[sp] is not None and len(TOKEN.findall(scene.words(sp))) <= 3
                and could_be_name(scene.pack, scene.text, *sp) and not overlaps(sp, scene.claimed)]
    part = name_part(scene.pack, name)
    if part is not None:
        single = [w for w in maximal(readable) if lone(values[w]) and lone_name_part(scene.text, *w) != part]
        readable = [sp for sp in readable if not overlaps(sp, single)]
        if not given_by_full_name(scene.pack, name):  # its own name says the part: that part of a whole name
            whole = [w for w in maximal(readable) if not lone(values[w])]
            own = [sp for w in whole if (sp := _name_part_span(scene, w, part)) in values and values[sp]]
            readable = [sp for sp in readable if not overlaps(sp, whole) or sp in own]
    for sp in readable:
        found.add(sp, values[sp])
    return found


def _name_part_span(scene: Scene, whole: Span, part: int) -> Span | None:
    """The word of a whole name that is its given name (the first, a title aside) or its family name (the last)."""
    words = [(t.start(), t.end()) for t in scene.tokens if whole[0] <= t.start() and t.end() <= whole[1]
             and not re.fullmatch(_TITLES, t.group() + ".", flags=re.IGNORECASE)]
    return (words[0] if part == 0 else words[-1]) if words else None


def _normalised_spans(scene: Scene, name: str, spec) -> Readings:
    """Any span the normaliser reads, by its smallest words (an email address, a phone number)."""
    found, values = Readings(name, scene.text), _normalised(scene, spec)
    for sp in smallest([sp for sp in scene.spans if values[sp] is not None], values):
        found.add(sp, values[sp])
    return found


def _web_address_spans(scene: Scene, name: str, spec) -> Readings:
    """Each web address of the text, whole."""
    found = Readings(name, scene.text)
    for sp in scene.web_addresses:
        found.add(sp, scene.words(sp))
    return found


# Each whole-answer reader: (words, spec, today) -> the value, or None.

def _whole_normalised(text: str, spec, today: date):
    return NORMALIZERS[spec.normalizer](text, values=getattr(spec, "values", []), synonyms=getattr(spec, "synonyms", {}))


def _whole_period(text: str, spec, today: date):
    period = dates.resolve_period(text, today)
    return None if period is None else (period.start, period.end)


def _whole_future_day(text: str, spec, today: date):
    return dates.resolve_future_day(text, today)


def _whole_moment(text: str, spec, today: date):
    return moments.moment(text, today)


def _whole_none(text: str, spec, today: date):
    return None


@dataclass(frozen=True)
class Reader:
    """How one type of value is read. `family`: which types hold alike values (a day and a period);
    `forced`: words that read are the value, written once present (the model picks which); `free`: any
    words could be one, so they are taken only when asked for; `judged(words)`: whether the slot head may
    drop a reading of these words it finds unlikely (it learned from SGD's slots, which hold numbers but no
    id written with letters or marks: "4ef9a417-02e9-…", "#14"); `moment`: a single day or time, of which a
    call may take a range (`values._moments_in_order`). What its consumers ask of a type, so that none
    compares a normaliser's name: `closed`, its values are a set of choices the words name one of;
    `prose`, the user's own words (a note), which a clause pointed back at never gives; `searches`, the
    words a search finds things by; `ends`, an IR predicate giving both ends of a range at once;
    `parts`, an IR predicate giving a person's name's parts."""
    spans: Callable[[Scene, str, object], Readings]
    whole: Callable[[str, object, date], object]
    family: str
    forced: bool = False
    free: bool = False
    judged: Callable[[str], bool] = lambda words: True
    moment: bool = False
    closed: bool = False
    prose: bool = False
    searches: bool = False
    ends: bool = False
    parts: bool = False


READERS: dict[str, Reader] = {
    "date": Reader(_date_spans, _whole_period, "date", forced=True, moment=True),
    "period": Reader(_period_spans, _whole_period, "date", forced=True, ends=True),  # an IR predicate giving two dates
    "future_date": Reader(_future_date_spans, _whole_future_day, "date", moment=True),
    # A day with its time is a moment whatever the words around it: SGD's slots hold days and times apart,
    # and the slot head gave "June 12 at 4:30 pm" 0.0001 for a field starting a session.
    "date_time": Reader(_date_time_spans, _whole_moment, "date_time", forced=True, judged=lambda words: False,
                        moment=True),
    # Money written as money ("45 dollars", "89.50 EUR") is an amount whatever the words around it: the slot
    # head, which learned SGD's amounts, gave "45 dollars" 0.36 for a payment's `amount`.
    "amount": Reader(_amount_spans, _whole_normalised, "amount", forced=True,
                     judged=lambda words: not written_as_money(words)),
    "decimal": Reader(_decimal_spans, _whole_normalised, "amount", forced=True),
    "integer": Reader(_integer_spans, _whole_normalised, "integer"),
    "time": Reader(_time_spans, _whole_normalised, "time"),
    "digits": Reader(_digits_spans, _whole_normalised, "digits"),
    "identifier": Reader(_identifier_spans, _whole_normalised, "identifier", judged=str.isdigit),
    # An address is an address whatever the words around it: SGD's slots hold none for the head to learn.
    "email": Reader(_normalised_spans, _whole_normalised, "email", forced=True, judged=lambda words: False),
    # A number with its country code is a phone number whatever the words around it: the slot head learned
    # SGD's phones ("415-555-0142") and gave "+447700900123" 0.02.
    "phone": Reader(_normalised_spans, _whole_normalised, "phone", forced=True,
                    judged=lambda words: not (NORMALIZERS["phone"](words) or "").startswith("+")),
    "e164": Reader(_normalised_spans, _whole_normalised, "phone", forced=True, judged=lambda words: False),
    "choice": Reader(_choice_spans, _whole_normalised, "choice", forced=True, closed=True),
    # SGD's slots hold no web address for the head to learn one from.
    "url": Reader(_web_address_spans, _whole_normalised, "url", forced=True, judged=lambda words: False),
    "lowercase_text": Reader(_lowercase_text_spans, _whole_normalised, "lowercase_text", free=True, prose=True),
    "title_text": Reader(_title_text_spans, _whole_normalised, "title_text", free=True),
    "search_text": Reader(_search_text_spans, _whole_normalised, "title_text", free=True, searches=True),
    "person_name": Reader(_person_name_spans, _whole_normalised, "person_name", free=True),
    "full_name": Reader(_full_name_spans, _whole_none, "person_name", free=True, parts=True),  # an IR predicate giving a name's parts
}


def reader(normalizer: str) -> Reader:
    """The reader of a normaliser type; a clear error for one no reader is registered for."""
    try:
        return READERS[normalizer]
    except KeyError:
        raise ValueError(f"no value reader for normaliser {normalizer!r} (known: {', '.join(sorted(READERS))})") from None


def value_readings(pack, text: str, today: date, only: set[str] | None = None) -> dict[str, Readings]:
    """What the rules read: per argument (and period-like IR predicate; only those named in `only` when
    given), each span its type reads and the value it reads as. Each argument is read on its own, so reading
    fewer changes none: a request's goals take a few of a large API's arguments, and a text's periods are
    worked out only when some argument read is a day."""
    scene = Scene(pack, text, today)
    wanted = (lambda name: True) if only is None else only.__contains__
    found = {name: reader(extra.normalizer).spans(scene, name, extra) for name, extra in pack.spec.ir_extra.items()
             if wanted(name)}
    found.update({name: reader(spec.normalizer).spans(scene, name, spec) for name, spec in pack.spec.arguments.items()
                  if wanted(name)})
    return found


def candidate_strings(readings: dict[str, Readings]) -> dict[str, list[str]]:
    """Per argument, the kept readings' words and values (what the grammar may write)."""
    return {name: found.strings() for name, found in readings.items()}

