"""The pack compiled into a grammar of valid IR (FARS-style constrained decoding), per request.

Only the pack's goal names (or the retrieved ones) can be written; each goal only its own argument
predicates, in a fixed order, with a period-like IR predicate (`_period`) instead of the arguments it gives.
Values are holes restricted to what the request grounds: a span of the request that the argument's own
normaliser can read ("last quarter" for a date, "75 bucks" for an amount, "link my bank" for a help topic),
or the value that span normalises to. So the model copies rather than invents, and cannot write a value
the request does not give: an argument with no such span cannot be written at all and stays missing.
Arguments that accept another call's output may also name another goal's id. The output is EBNF for
xgrammar (GBNF-compatible, so llama.cpp-style servers accept it too).
"""

from __future__ import annotations

import difflib
import json
import re
from datetime import date

from pipeline.language.readings import Reading, Readings
from pipeline.language.words import word_list
from pipeline.language.linking import learned_parts
from pipeline.language.values import link_values
from pipeline.packs.pack import ArgumentType, Pack
from pipeline.values import dates
from pipeline.values.normalizers import _TITLES, NORMALIZERS, _stem, choice_spans, full_name
from pipeline.values.numbers import format_amount, parse_amount
from pipeline.values.spans import _TOKEN, maximal as _maximal, request_spans

MAX_GOALS = 3
MAX_TEXT_SPAN_TOKENS = 6  # free text (an invoice's detail) is short
NONE_LINE = "% no goal of this domain covers the request"


def _literal(text: str) -> str:
    """An EBNF string literal (JSON escaping is what xgrammar's EBNF reads)."""
    return json.dumps(text, ensure_ascii=False)


def _asp_string(text: str) -> str:
    """The ASP string literal of a value, as the IR writes it."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _smallest(readable: list[tuple[int, int]], values: dict) -> list[tuple[int, int]]:
    """The words that make each reading: no span that reads the same with fewer words ("ring", not "give
    me a ring"), and none inside a span that reads otherwise ("call" inside "video call"; "10 in the morning"
    inside "quarter to 10 in the morning", itself read by "quarter to 10" with fewer words)."""
    inside = lambda a, b: a != b and b[0] <= a[0] and a[1] <= b[1]  # noqa: E731
    minimal = [a for a in readable if not any(inside(b, a) and values[b] == values[a] for b in readable)]

    def outread(a: tuple[int, int]) -> bool:  # a wider reading disagrees, and agrees with another that shares a's words
        return any(inside(a, b) and values[b] != values[a] and (b in minimal or any(
            inside(c, b) and values[c] == values[b] and _overlaps(c, [a]) for c in minimal)) for b in readable)
    return [a for a in minimal if not outread(a)]


_TIME_MARK = re.compile(r"\d\s*(?::\d|[ap]\.?m\b|o'?clock)|\bat\s+(?:\d|one|two|three|four|five|six|seven|eight|"
                        r"nine|ten|eleven|twelve)\b|\b(?:noon|midnight|quarter|half past)\b|in the (?:morning|afternoon|evening)",
                        re.IGNORECASE)
_ISO_DATE = re.compile(r"(?:19|20)\d\d-[01]?\d-[0-3]?\d")
_CUT_CLOCK = re.compile(r":\d")  # what follows an hour cut off from its minutes
_PHONE_LIKE = re.compile(r"\+?[\d\s().\-]{7,}")


# A day after "by" or "before" is when the user needs something, not a value ("the auditor wants it by
# monday"); and "now" alone is the moment of asking ("what i want now is ...").
_DEADLINE = re.compile(r"\b(?:by|before)\s+(?:the\s+|this\s+|next\s+)?$", re.IGNORECASE)
# The time of an event the request tells of ("our board meeting on Friday", "the audit next week") is when
# it happens, not a period of the records asked for.
# So is the time of a talk the user tells of, after its verb and whom it was with ("i phoned the bank
# yesterday"), but not after what it was about ("i phoned about the charge from yesterday").
_EVENT_TIME = re.compile(r"(?:\b(?:meeting|appointment|call|trip|visit|presentation|interview|conference|audit|review|"
                         r"deadline)s?\s+(?:is\s+|was\s+)?"
                         r"|\b(?:called|phoned|rang|emailed|e-mailed|texted|messaged|spoke|talked|chatted)"
                         r"(?:\s+(?!about\b|regarding\b|re\b|for\b|from\b|of\b|on\b|at\b|in\b)[\w'’]+){0,3}?\s+)"
                         r"(?:on\s+|at\s+|in\s+)?(?:the\s+)?$", re.IGNORECASE)
_OF_RECORDS = re.compile(r"(?:for|from|of|during|covering|over|through)\b", re.IGNORECASE)


def _event_time(text: str, span: tuple[int, int]) -> bool:
    """Whether the span is the time of an event the words just before it name ("the meeting on Friday"),
    not a period it is for ("the review for May")."""
    return _EVENT_TIME.search(text[:span[0]]) is not None and not _OF_RECORDS.match(text[span[0]:span[1]])


def _overlaps(span: tuple[int, int], others: list[tuple[int, int]]) -> bool:
    return any(a < span[1] and span[0] < b for a, b in others)


def _is_contact(span: str) -> bool:
    """A phone number, an email address or a long identifier ("0072 5518") and nothing else."""
    if "@" in span:
        return " " not in span.strip() and NORMALIZERS["email"](span) is not None
    return (bool(_PHONE_LIKE.fullmatch(span.strip())) and len(re.sub(r"\D", "", span)) >= 7
            and not _ISO_DATE.fullmatch(span.strip()))  # 1990-11-02 is a day, written the ISO way


def _without_breakdown(counts: list[tuple[int, int]], values: dict) -> list[tuple[int, int]]:
    """A count that is the sum of the others is the total, and the others its parts ("nine people,
    five grown-ups and four children"): only the total is a value."""
    numbers = {sp: int(values[sp]) for sp in counts if str(values[sp]).isdigit()}
    for sp, total in numbers.items():
        parts = [n for other, n in numbers.items() if other != sp]
        if len(parts) >= 2 and sum(parts) == total:
            return [sp]
    return counts


def value_candidates(pack: Pack, text: str, today: date, record: list[Reading] | None = None) -> dict[str, list[str]]:
    """For each argument (and period-like IR predicate), the values the text grounds: each maximal span its
    normaliser reads, and what it reads it as, less the spans the learned slot head says are no value of
    that argument (`language.values`). Free text (an invoice's detail) may be any short span. `record`
    receives every reading, kept or dropped and why."""
    readings = link_values(pack, text, value_readings(pack, text, today))
    if record is not None:
        record += [r for found in readings.values() for r in found.items]
    return candidate_strings(readings)


def candidate_strings(readings: dict[str, Readings]) -> dict[str, list[str]]:
    """Per argument, the kept readings' words and values (what the grammar may write)."""
    return {name: found.strings() for name, found in readings.items()}


def value_readings(pack: Pack, text: str, today: date) -> dict[str, Readings]:
    """What the rules read: per argument, each span its normaliser reads and the value it reads as."""
    spans = request_spans(text)
    tokens = list(_TOKEN.finditer(text))
    # The digits of a phone number or an email address are neither a date nor an amount.
    contacts = [sp for sp in spans if _is_contact(text[sp[0]:sp[1]])]
    plain = [sp for sp in spans if not _overlaps(sp, contacts)]
    # A number read as a year far from ours ("cost me 2400", "booking RD-8830") is no period.
    periods = {sp: dates.resolve_period(text[sp[0]:sp[1]], today) for sp in plain}
    periods = {sp: p for sp, p in periods.items() if p is not None and 1900 <= p.start.year <= 2199}
    timely = _maximal(list(periods))
    readable_periods = [sp for sp in timely if not _DEADLINE.search(text[:sp[0]]) and not _event_time(text, sp)
                        and text[sp[0]:sp[1]].lower() != "now"]
    candidates: dict[str, Readings] = {}
    amounts = [sp for sp in plain if parse_amount(text[sp[0]:sp[1]], whole=True) is not None
               and not _edge_word_adds_nothing(text[sp[0]:sp[1]])]
    read_times = {sp: NORMALIZERS["time"](text[sp[0]:sp[1]]) for sp in plain if _TIME_MARK.search(text[sp[0]:sp[1]])}
    times = _smallest([sp for sp, t in read_times.items() if t is not None], read_times)
    claimed = timely + amounts + contacts + times  # words of these are no free text (a deadline's day neither)
    person_names: list[tuple[int, int]] = []  # capitalised names a full-name argument reads: no service or goods
    for name, extra in pack.spec.ir_extra.items():
        candidates[name] = Readings(name, text)
        if extra.normalizer == "period":
            for sp in readable_periods:
                candidates[name].add(sp)
        elif extra.normalizer == "full_name":
            # The whole name only ("Emma Wilson", not "Emma"): its parts are what the part arguments are for.
            # A lone word labelled as one part ("last name Shah") is that part, not a whole name.
            names = _maximal([(a, b) for a, b in spans if len(_TOKEN.findall(text[a:b])) <= 3
                              and _could_be_name(pack, text, a, b) and full_name(text[a:b]) is not None
                              and not (_lone(text[a:b]) and _PART_LABEL.search(text[:a]))])
            for sp in names:
                candidates[name].add(sp)
            person_names += [(a, b) for a, b in names if all(w[:1].isupper() for w in _TOKEN.findall(text[a:b]))]
    for name, spec in pack.spec.arguments.items():
        found = Readings(name, text)
        if spec.normalizer == "date":
            given_by_period = any(name in extra.gives for extra in pack.spec.ir_extra.values())
            for sp in readable_periods:
                p = periods[sp]
                if not given_by_period and p.start != p.end:  # a day, unless a period gives the argument
                    continue
                found.add(sp, dates.format_date(p.end if name == "end_date" else p.start))
        elif spec.normalizer == "lowercase_text":
            phrases = _maximal(_phrases(pack, text, spans, claimed))
            # A person's name is no service while the request names something else ("invoice Ann Lee for
            # the tile job"); alone it may be one ("bill them for Logo Design").
            phrases = [sp for sp in phrases if not _overlaps(sp, person_names)] or phrases
            # Nor is a word for a person a thing: "an invoice for a client" says whom it is for, not what.
            phrases = [sp for sp in phrases if not set(_TOKEN.findall(text[sp[0]:sp[1]].lower())) <= _PERSON_NOUNS]
            for a, b in phrases:
                found.add((a, b), text[a:b].lower())
        elif spec.normalizer == "title_text":
            # A proper name of a thing ("Bella Notte", "my landlord Tom Berg"): whole phrases, and the
            # capitalised run inside one ("Tom Berg").
            whole = [w for w in _TOKEN.findall(text) if w.lower() not in _FUNCTION_WORDS]
            for a, b in _maximal(_phrases(pack, text, spans, claimed)):
                words = _TOKEN.findall(text[a:b])
                if all(difflib.get_close_matches(w.lower(), _pack_words(pack), n=1, cutoff=0.85) for w in words):
                    continue  # the pack's own words, or a misspelling of them ("reservaton")
                if text[a:b].islower() and words != whole:  # lower case: only as a whole answer ("casa lupita")
                    continue
                if text[max(a - 4, 0):a] == "The " and text[a:a + 1].isupper():
                    a -= 4  # a capitalised "The" is part of the name ("The Blue Door")
                found.add((a, b))
                for run in re.finditer(r"[A-Z][\w'’&-]*(?:\s+[A-Z][\w'’&-]*)*", text[a:b]):
                    found.add((a + run.start(), a + run.end()))
            for sp in _addresses(text) + _whole_name_with_number(text):  # its number is no amount or count
                found.add(sp)
        elif spec.normalizer == "future_date":  # a day ahead: the smallest words naming it, and the day
            ahead = {sp: dates.resolve_future_day(text[sp[0]:sp[1]], today) for sp in plain}
            for sp in _maximal([sp for sp, d in ahead.items() if d is not None
                                and not _TIME_MARK.search(text[sp[0]:sp[1]])]):
                found.add(sp, dates.format_date(ahead[sp]))
        elif spec.normalizer == "digits":  # an identifier: digits alone, not a year of a date
            for a, b in _maximal([sp for sp in spans if NORMALIZERS["digits"](text[sp[0]:sp[1]]) is not None
                                  and re.fullmatch(r"[\d\s\-]+", text[sp[0]:sp[1]])
                                  and not _overlaps(sp, readable_periods + times)]):
                found.add((a, b), NORMALIZERS["digits"](text[a:b]))
        elif spec.normalizer in ("integer", "time"):
            # Counts and times outside phone numbers; a count is never part of a time, and a time says it
            # is one ("8pm", "7:30", "at 7", "noon"): a bare number is a count.
            # Nor is the hour of a clock time written with its minutes a time of its own ("at 8" of "at 8:30").
            pool = [sp for sp in plain if (spec.normalizer == "integer" and not _overlaps(sp, times + readable_periods))
                    or (spec.normalizer == "time" and _TIME_MARK.search(text[sp[0]:sp[1]])
                        and not _CUT_CLOCK.match(text, sp[1]))]
            normalize = NORMALIZERS[spec.normalizer]
            values = {sp: normalize(text[sp[0]:sp[1]]) for sp in pool}
            read = _smallest([sp for sp in pool if values[sp] is not None], values)
            if spec.normalizer == "integer":
                read = _without_breakdown(read, values)
            for sp in read:
                found.add(sp, values[sp])
            if spec.normalizer == "integer" and "year" in name.lower().split("_"):  # "2013", "six years back"
                for sp in readable_periods:
                    p = periods[sp]
                    if p.start == date(p.start.year, 1, 1) and p.end == date(p.start.year, 12, 31):
                        found.add(sp, str(p.start.year))
        elif spec.normalizer == "amount":
            # Spans that are wholly an amount, the longest ones ("1,250", not "250"), outside dates.
            for a, b in _maximal([sp for sp in amounts
                                  if not _overlaps(sp, readable_periods)]):
                found.add((a, b), format_amount(parse_amount(text[a:b], whole=True)))
        elif spec.normalizer == "choice":
            _choice_readings(spec, text, tokens, found)
        else:
            normalize = NORMALIZERS[spec.normalizer]
            values = {sp: normalize(text[sp[0]:sp[1]], values=spec.values, synonyms=spec.synonyms)
                      for sp in spans}
            readable = [sp for sp in spans if values[sp] is not None]
            if spec.normalizer == "person_name":  # never the words of a date, a time or a contact
                readable = [sp for sp in readable if len(_TOKEN.findall(text[sp[0]:sp[1]])) <= 3
                            and _could_be_name(pack, text, *sp)
                            and not _overlaps(sp, claimed)]
                part = _name_part(pack, name)
                if part is not None:  # a name on its own of one word: only the part it is ("Maria", "Mr. Chen")
                    lone = [w for w in _maximal(readable) if _lone(values[w]) and _lone_name_part(text, *w) != part]
                    readable = [sp for sp in readable if not _overlaps(sp, lone)]
            else:
                readable = _smallest(readable, values)
            for sp in readable:
                found.add(sp, values[sp])
        candidates[name] = found
    return candidates


# A label or a title before a lone name says which part of a name it is ("last name Shah", "Mr. Chen").
_PART_NAMED = r"\b(last|family|sur|first|given) ?name"  # the group: which part
_LABEL_TAIL = r"\s*(?:is\s+|[:=]\s*)?"  # "last name Shah", "surname is Shah", "surname: Shah"
_FAMILY_LABEL = re.compile(r"\b(?:(?:last|family|sur) ?name|mr|mrs|ms|miss|mx|dr|prof|mister)\b\.?" + _LABEL_TAIL + "$",
                           re.IGNORECASE)
_PART_LABEL = re.compile(_PART_NAMED + _LABEL_TAIL + "$", re.IGNORECASE)
_LABELLED_NAME = re.compile(_PART_NAMED + _LABEL_TAIL  # then a word that is no preposition or article
                            + r"(?!(?:on|of|for|to|and|or|in|at|the|a|an|with|field)\b)[^\W\d_]", re.IGNORECASE)


def _labelled_parts(text: str) -> set[int]:
    """The parts of a name (0 given, 1 family) the text labels ("first name Ana", "surname: Ruiz")."""
    return {0 if m.group(1).lower() in ("first", "given") else 1 for m in _LABELLED_NAME.finditer(text)}


def _lone(name: str) -> bool:
    """Whether a name is one word, a title aside ("Maria", "Mr. Chen")."""
    return len(_TOKEN.findall(re.sub(_TITLES, "", name.strip(), flags=re.IGNORECASE))) == 1


def _lone_name_part(text: str, start: int, end: int) -> int:
    """Which part of a name a lone word is: the family name (1) with a title or after a last-name label, else
    the given name (0), as a person is called by it ("change Maria's phone")."""
    titled = re.match(_TITLES, text[start:end], flags=re.IGNORECASE) is not None
    return 1 if titled or _FAMILY_LABEL.search(text[:start]) else 0


def _name_part(pack: Pack, argument: str) -> int | None:
    """The part of a whole name (0 given, 1 family) an argument is, when a full-name predicate gives it."""
    for extra in pack.spec.ir_extra.values():
        if extra.normalizer == "full_name" and argument in extra.gives:
            return extra.gives.index(argument)
    return None


def _choice_readings(spec: ArgumentType, text: str, tokens: list[re.Match], found: Readings) -> Readings:
    """The words that name a listed value ("ring" -> phone, "video call" -> video), not a sentence around
    them, and the values they name."""
    for first, last, value in choice_spans([t.group() for t in tokens], spec.values, spec.synonyms):
        found.add((tokens[first].start(), tokens[last].end()), value)
    return found


_ADDRESS = re.compile(r"\b\d+[A-Za-z]?\s+(?:[A-Z][\w'’.-]*\s+){0,4}(?P<last>[A-Z][A-Za-z]*)\b\.?")


def _addresses(text: str) -> list[tuple[int, int]]:
    """A house number, capitalised words and a street type ("18300 Carriage Drive", "12 Elm St").

    >>> t = "take me to 18300 Carriage Drive for 2"
    >>> [t[a:b] for a, b in _addresses(t)], _addresses("pay 500 Acme Corp")
    (['18300 Carriage Drive'], [])
    """
    out = []
    for m in _ADDRESS.finditer(text):
        words = m.group().split()
        if len(words) >= 3 and m["last"].lower() in word_list("street_types"):
            out.append((m.start(), m.start() + len(m.group().rstrip("."))))
    return out


def _whole_name_with_number(text: str) -> list[tuple[int, int]]:
    """The whole text, when it is nothing but a name written with capitals and a number in it ("Big 4",
    "Studio 54"): an answer that names something, whose number counts nothing.

    >>> _whole_name_with_number("Big 4"), _whole_name_with_number("4 people"), _whole_name_with_number("Nopa")
    ([(0, 5)], [], [])
    """
    words = list(_TOKEN.finditer(text))
    if not 1 < len(words) <= MAX_TEXT_SPAN_TOKENS or not any(w.group().isdigit() for w in words):
        return []
    if all(w.group().isdigit() or w.group()[0].isupper() for w in words):
        return [(words[0].start(), words[-1].end())]
    return []


def _choice_candidates(spec: ArgumentType, text: str, tokens: list[re.Match]) -> list[str]:
    return _choice_readings(spec, text, tokens, Readings("", text)).strings()


def _phrases(pack: Pack, text: str, spans: list[tuple[int, int]], claimed: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Spans that may be free text naming a thing ("logo design"): short, without the words of a date, an
    amount, a time or a contact, of the pack's goals ("invoice") or of the request itself ("make", "for"),
    and without a clause's subject."""
    phrases = []
    for a, b in spans:
        words = [w.lower() for w in _TOKEN.findall(text[a:b])]
        if a and text[a - 1] in "'’":  # the tail of "there'll", "it's"
            continue
        # A run of capitalised words (not "I") is a name, whatever words it is made of ("from New York", "at
        # The Blue Door"): "new" or "the" there is no word of the request. A sentence's first capital alone
        # says nothing; the capitals after it do.
        plain = [] if _written_as_name(text[a:b]) and "i" not in words else words
        if (len(words) > MAX_TEXT_SPAN_TOKENS or plain and (plain[0] in _FUNCTION_WORDS or plain[-1] in _FUNCTION_WORDS)
                or re.search(r"[^\w\s'&/-]|\s-|-\s", text[a:b]) or set(plain) & _REQUEST_WORDS
                or set(words) & _goal_words(pack) or _overlaps((a, b), claimed) or set(plain) & _SUBJECT_PRONOUNS):
            continue
        phrases.append((a, b))
    return phrases


# A subject starts a clause about the thing, not its name ("the tile job we just wrapped up" names "tile job").
_SUBJECT_PRONOUNS = set("i we you he she they".split())
_PERSON_NOUNS = set("""client clients customer customers vendor vendors supplier suppliers contractor contractors
person people someone somebody guy guys lady ladies friend friends neighbor neighbour partner partners landlord
tenant tenants boss employee employees coworker colleague accountant bookkeeper lawyer patient patients student
students buyer buyers member members""".split())
_EDGE_WORDS = set("a an the for of to and or with about from in on at my our your me i please pls".split())
# Words of the request itself, not of the thing it names: never part of free text.
_REQUEST_WORDS = _EDGE_WORDS - {"of"} | set(
    "make create send bill new need want like can could would do set up generate prepare get give show tell "
    "how run pull look find check open".split())


# Words of the language rather than of a thing or a person: never a name when written in lower case ("update
# her record"), never the first or last word of free text ("so", "them", "asap").
_FUNCTION_WORDS = _REQUEST_WORDS | set("""i me my we us our you your he him his she her they them their it its this that
these those who what which when where why how is are was were be been am has have had will just now new old
already also too very all any some every each no not one own same other there here up out off over again
yes ok okay thanks thank hi hello hey dear sir madam so but if asap thx soon today u ur ya
actually wait sorry oh hmm um uh btw instead anyway well of by""".split())


def _pack_words(pack: Pack) -> set[str]:
    """The words the pack itself uses (its goals' and arguments' descriptions and examples; not the names
    inside an example: "The Blue Heron" in "hold a booking at The Blue Heron" is a value)."""
    if not hasattr(pack, "_words"):
        texts = [g.description for g in pack.spec.goals.values()]
        texts += [a.description for a in pack.spec.arguments.values()]
        words = {w.lower() for t in texts for w in _TOKEN.findall(t)}
        for example in (e for g in pack.spec.goals.values() for e in g.examples):
            words |= {w.lower() for i, w in enumerate(_TOKEN.findall(example)) if i == 0 or not w[:1].isupper()}
        object.__setattr__(pack, "_words", words)
    return pack._words


COMMON_WORD_ZIPF = 5.0  # a word this frequent in English ("sure", "wrong", "may") is no name in lower case
LONE_NAME_ZIPF = 4.0  # a single word opening a sentence is a name only if rarer than this ("Priyanka", not "Haha")


def zipf(word: str) -> float:
    from wordfreq import zipf_frequency

    return zipf_frequency(word.lower(), "en")


def _common_word(word: str) -> bool:
    return zipf(word) >= COMMON_WORD_ZIPF


def _beside_a_name_word(pack: Pack, text: str, start: int, end: int) -> bool:
    """Whether the word before or after could be the other half of a name ("emma" in "emma wilson")."""
    before = re.search(r"([^\W\d_]+)\s+$", text[:start])
    after = re.match(r"\s+([^\W\d_]+)", text[end:])
    return any(m and m.group(1).lower() not in _FUNCTION_WORDS and not _common_word(m.group(1))
               and m.group(1).lower() not in _pack_words(pack) for m in (before, after))


_NAME_LABELS = frozenset("name names surname surnames forename firstname lastname".split())  # never a name


def _could_be_name(pack: Pack, text: str, start: int, end: int) -> bool:
    """Whether the words may be a person's name: whole words (not "Linda" inside linda.t@x.com, not the
    "re" of "you're"), each capitalised or not a word of the language or of the pack ("her", "record",
    "sure"); a capitalised common word opening a sentence ("Sorry, ...") is no name either."""
    if re.match(r"[.@\-]\w", text[end:end + 2]) or (start and re.match(r"[\w.@'’\-]", text[start - 1])):
        return False  # part of an address, a contraction or a compound ("in-laws")
    opens_sentence = not text[:start].strip() or text[:start].rstrip()[-1] in ".!?"
    words = _TOKEN.findall(text[start:end])
    if len(words) == 1 and opens_sentence and zipf(words[0]) >= LONE_NAME_ZIPF:  # "Haha, ...", "Sure"
        return False
    if len(words) == 1 and words[0].islower() and text.strip(" .,!?") != words[0] \
            and not _beside_a_name_word(pack, text, start, end):
        return False  # one word in lower case is a name only as a whole answer or part of a whole name
    return all(w.lower() not in _FUNCTION_WORDS and w.lower() not in _NAME_LABELS
               and not ((w[0].islower() or (i == 0 and opens_sentence)) and _common_word(w))
               and (w[0].isupper() and not (i == 0 and opens_sentence) or w.lower() not in _pack_words(pack)
                    and not (len(w) > 4 and w.endswith(("ed", "ing")))) for i, w in enumerate(words))


def _edge_word_adds_nothing(span: str) -> bool:
    """Whether the span begins or ends with a word that is no part of its amount ("for 500", not "a grand")."""
    words = _TOKEN.findall(span)
    if words[-1].lower() in _EDGE_WORDS:
        return True
    if words[0].lower() in {"a", "an"}:  # "a grand" is 1000; "a 500" is 500
        return parse_amount(span.split(None, 1)[1] if " " in span else "", whole=True) is not None
    return words[0].lower() in _EDGE_WORDS


def _goal_words(pack: Pack) -> set[str]:
    return {w for goal in pack.spec.goals for w in goal.split("_")}


# Arguments whose words, once present, are the value: a readable date, amount, email, phone or listed
# value in the goal's own words is written (the LLM picks which one), never left out. Names and free text
# are written only if the LLM chooses to, except a whole name written as one (`_written_as_name`).
FORCED_NORMALIZERS = {"date", "amount", "email", "phone", "choice"}


def _written_as_name(value: str) -> bool:
    """A whole name written as one ("Ana Ruiz"): two or more words, each capitalised. Once in a goal's
    words it is the goal's person, so it is written, not left to the model."""
    words = _TOKEN.findall(value)
    return len(words) >= 2 and all(w[:1].isupper() for w in words)


def _names_person(pack: Pack, predicate: str, candidates: dict[str, list[str]]) -> bool:
    """Whether a full-name predicate has a whole name written as one among the goal's values."""
    return pack.value_spec(predicate).normalizer == "full_name" and any(
        _written_as_name(v) for v in candidates.get(predicate, []))


def _naming_words(pack: Pack, goal: str) -> set[str]:
    """The words that name a goal's output ("invoice" for create_invoice, "report" and "expense" for
    expense_report), folded like the closed-value matcher folds them."""
    api = pack.spec.apis[pack.spec.goals[goal].api]
    return {_stem(w) for w in [*goal.split("_"), api.produces]} - {_stem(w) for w in _REQUEST_WORDS}


def _without_references(pack: Pack, candidates: dict[str, list[str]], others: list[str]) -> dict[str, list[str]]:
    """Where another goal of the request produces what an argument accepts, words naming that goal's output
    ("about the invoice") refer to it: they are not a value ("Invoicing") of the argument."""
    naming = set().union(*(_naming_words(pack, g) for g in others)) if others else set()
    result = dict(candidates)
    for name, spec in pack.spec.arguments.items():
        if spec.normalizer != "choice" or not any(
                pack.spec.apis[pack.spec.goals[g].api].produces in spec.accepts_output for g in others):
            continue
        # The candidates are the words and the values they read as; a value may be written as itself ("tax").
        kept = [v for v in candidates[name] if not any(_stem(w.lower()) in naming for w in _TOKEN.findall(v))]
        values = {NORMALIZERS["choice"](v, values=spec.values, synonyms=spec.synonyms) for v in kept}
        result[name] = [v for v in candidates[name] if v in values or v in kept and v not in spec.values]
    return result


def _referred_to(pack: Pack, source: str, goals: list[str], outputs: list[int], has_value: bool) -> list[int]:
    """Of the goals (1-based positions) whose output an argument may take, those its words refer to: the
    ones they name ("a call over the spending report" is about the report, not the invoice); with none
    named, any of them, unless the words give the argument a value of its own ("a call about tax")."""
    said = {_stem(w.lower()) for w in _TOKEN.findall(source)}
    named = [k for k in outputs if _naming_words(pack, goals[k - 1]) & said]
    return named or ([] if has_value else outputs)


def _with_context(pack: Pack, own: dict[str, list[str]], context: dict[str, list[str]]) -> dict[str, list[str]]:
    """A clause's own values, and for each argument it gives no value of, the values of the words it points
    back at ("a $40 charge hit us on Monday, look it up"). Never free text: what a pointed-at clause is
    about is seldom what the goal's free text names."""
    def free_text(name: str) -> bool:
        spec = pack.spec.arguments.get(name)
        return spec is not None and spec.normalizer == "lowercase_text"
    return {**own, **{name: values for name, values in context.items()
                      if values and not own.get(name) and not free_text(name)}}


def _with_the_rest(by_position: dict[int, dict[str, list[str]]], whole: dict[str, list[str]],
                   ) -> dict[int, dict[str, list[str]]]:
    """Each goal's own values, and for each argument its words give none of, what the rest of the request
    gives it that no other goal's words do ("a rental in Banff. We are a big family, so it has to have 4
    bedrooms."). Only where the slot head judged the readings: it read each value in the words around it,
    so a value outside the goal's clause is still that argument's; the rules alone know a value's goal
    only by the clause it is in."""
    out = {}
    for i, own in by_position.items():
        elsewhere = {name: {v for j, other in by_position.items() if j != i for v in other.get(name, [])}
                     for name in whole}
        rest = {name: [v for v in values if v not in elsewhere[name]] for name, values in whole.items()}
        out[i] = {**own, **{name: values for name, values in rest.items() if values and not own.get(name)}}
    return out


def ir_grammar(pack: Pack, query: str, today: date, goals: list[str] | None = None, fixed: bool = False,
               sources: list[str] | None = None, max_goals: int = MAX_GOALS, allow_none: bool = True,
               contexts: list[str] | None = None, record: list[Reading] | None = None) -> str:
    """EBNF of the IRs a translator may write for this request.

    `goals`: the goals it may name (default: all of the pack's). `fixed`: it names exactly these, in this
    order, and only fills their arguments (goals chosen by retrieval), each from its own words
    (`sources[i]`, default the whole request), and from the words it points back at (`contexts[i]`) the
    arguments its own words do not give; otherwise it names one to `max_goals` of them, none twice,
    or writes the no-goal line (unless `allow_none` is false: retrieval already found the request in the
    domain). `record` receives every value reading of the words read, kept or dropped and why."""
    goals = [g for g in (pack.requestable_goals() if goals is None else goals) if g in pack.spec.goals]
    whole = value_candidates(pack, query, today, record)
    by_position = {i: value_candidates(pack, src, today, record) if src != query else whole
                   for i, src in enumerate(sources or [], 1)} if fixed else {}
    for i, context in enumerate(contexts or [], 1):
        if fixed and context and i in by_position:
            pointed_at = value_candidates(pack, context, today, record)
            # A listed value may be named across the two ("lost an account I deleted; how to recover it").
            if sources:
                joined = f"{context}, {sources[i - 1]}"
                tokens = list(_TOKEN.finditer(joined))
                pointed_at.update({name: _choice_candidates(spec, joined, tokens)
                                   for name, spec in pack.spec.arguments.items()
                                   if spec.normalizer == "choice" and not pointed_at.get(name)})
            by_position[i] = _with_context(pack, by_position[i], pointed_at)
    judged = learned_parts(pack)["value"]
    if fixed and judged and sources:
        by_position = _with_the_rest(by_position, whole)
    if fixed:
        for i, goal in enumerate(goals, 1):
            others = [g for j, g in enumerate(goals, 1) if j != i]
            by_position[i] = _without_references(pack, by_position.get(i, whole), others)
    count = len(goals) if fixed else min(max_goals, len(goals))
    rules: list[str] = []
    defined: set[str] = set()

    def define(name: str, body: str) -> str:
        if name not in defined:
            defined.add(name)
            rules.append(f"{name} ::= {body}")
        return name

    def fact(predicate: str, gid: str, argument: str, position: int) -> str | None:
        """The fact giving one argument, or None when nothing can fill it."""
        candidates = by_position.get(position, whole)
        # A whole name is what gives its parts, never one part ("Ana Ruiz" is no family name).
        wholes = {v for extra, spec in pack.spec.ir_extra.items() if argument in spec.gives
                  and spec.normalizer == "full_name" for v in candidates.get(extra, []) if _written_as_name(v)}
        options = [_literal(_asp_string(v)) for v in candidates.get(argument, []) if v not in wholes]
        spec = pack.spec.arguments.get(argument)
        if spec is not None and spec.accepts_output and count > 1:
            # Only a goal whose output the argument accepts (a customer profile is no topic to discuss).
            outputs = [k for k in range(1, count + 1) if k != position and (
                not fixed or pack.spec.apis[pack.spec.goals[goals[k - 1]].api].produces in spec.accepts_output)]
            if fixed and sources:
                outputs = _referred_to(pack, sources[position - 1], goals, outputs, bool(options))
            options += [_literal(f"g{k}") for k in outputs]
        if not options:
            return None
        values = define(f"v_{argument}_{position}", " | ".join(options))
        return f"{_literal(f'_{predicate}({gid}, ')} {values} {_literal(').' + chr(10))}"

    def optional(argument: str, rule: str, position: int) -> str:
        spec = pack.value_spec(argument)
        # Judged by the slot head, the words it kept are the argument's value, whatever their kind.
        forced = judged or spec.normalizer in FORCED_NORMALIZERS or spec.normalizer == "period" or \
            _names_person(pack, argument, by_position.get(position, whole))
        return f"({rule})" if fixed and forced else f"({rule})?"

    def goal_rule(goal: str, position: int) -> str:
        name = f"goal{position}_{goal}"
        if name in defined:
            return name
        gid = f"g{position}"
        takes = pack.goal_takes(goal)
        parts = [_literal(f"_goal({gid}, {goal}).\n")]
        given_by_extra: set[str] = set()
        for extra, extra_spec in pack.spec.ir_extra.items():
            if set(extra_spec.gives) <= set(takes):
                # Either the period-like fact, or the arguments it gives, one by one.
                together = fact(extra, gid, extra, position)
                each = [f for a in extra_spec.gives if (f := fact(a, gid, a, position))]
                # The arguments one by one: at least the first written, the others optional after it. One
                # period in the words gives every end or none: "expenses for 2024" is no end date alone.
                one_by_one = [" ".join([f"({each[i]})"] + [f"({f})?" for f in each[i + 1:]])
                              for i in range(len(each))]
                if extra_spec.normalizer == "period" and len(by_position.get(position, whole).get(extra, [])) == 1:
                    one_by_one = [" ".join(f"({f})" for f in each)] if len(each) == len(extra_spec.gives) else []
                alternatives = ([together] if together else []) + one_by_one
                if fixed and together and _names_person(pack, extra, by_position.get(position, whole)):
                    alternatives = [together]  # written whole ("Ana Ruiz"): the name, not a guess at its parts
                labelled = _labelled_parts(sources[position - 1] if sources else query) \
                    if fixed and extra_spec.normalizer == "full_name" else set()
                if labelled and len(each) == len(extra_spec.gives):
                    # Parts the words label ("first name Ana, last name Ruiz") are written, each as its part.
                    parts.append(" ".join(f"({f})" if i in labelled else f"({f})?" for i, f in enumerate(each)))
                elif alternatives:
                    parts.append(optional(extra, " | ".join(f"({a})" for a in alternatives), position))
                given_by_extra |= set(extra_spec.gives)
        for argument in takes:
            if argument not in given_by_extra and (f := fact(argument, gid, argument, position)):
                parts.append(optional(argument, f, position))
        return define(name, " ".join(parts))

    none = _literal(NONE_LINE + "\n")
    if fixed:
        body = " ".join(goal_rule(goal, i) for i, goal in enumerate(goals, 1)) if goals else none
        return "\n".join([f"root ::= {body}", *rules]) + "\n"

    def rest(used: tuple[str, ...]) -> str:
        """After the goals used so far: another unused one, or the end."""
        options = []
        for goal in goals:
            if goal not in used:
                follow = rest(used + (goal,)) if len(used) + 1 < count else ""
                options.append(f"{goal_rule(goal, len(used) + 1)} {follow}".strip())
        name = "rest_" + "_".join(used) if used else "first"
        if name not in defined:
            body = " | ".join(options) if options else '""'
            define(name, f"({body})?" if used and options else body)
        return name

    root = (f"root ::= {rest(())}" + (f" | {none}" if allow_none else "")) if goals else f"root ::= {none}"
    return "\n".join([root, *rules]) + "\n"
