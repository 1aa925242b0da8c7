"""Reading dates and periods the way people write them, resolved against `today`.

Rules (shared/benchmark/quickbooks/SPEC.md): a month, day, quarter or half written without a year is the most
recent one that has begun on or before `today`; in a span the end is the first such period on or after the
start, and a year written on one end applies to both; relative periods (last month, year to date, last N
days) are computed from `today`. Anything this module cannot read gives `None`: the caller then asks the user
rather than guessing.
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Callable

from pipeline.values.lexicon import alternation, any_of, words_of
from pipeline.values.numbers import parse_number_words

MONTHS = {name: i for i, name in enumerate(calendar.month_name) if name}
MONTHS.update({name: i for i, name in enumerate(calendar.month_abbr) if name})
MONTHS = {k.lower(): v for k, v in MONTHS.items()}
MONTHS["sept"] = 9
WEEKDAYS = {name.lower(): i for i, name in enumerate(calendar.day_name)}
ORDINALS = {"first": 1, "1st": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3, "fourth": 4, "4th": 4,
            "last": 4}

_MONTH_RE = r"(?P<month>" + "|".join(sorted(MONTHS, key=len, reverse=True)) + r")\.?"


def _said(part: str) -> tuple[str, ...]:
    """A list of the dates lexicon (`language/lexicon/dates.yaml`)."""
    return words_of("dates", part)


def _any(part: str) -> str:
    """A regex group matching any words of a list of the dates lexicon."""
    return any_of("dates", part)


_SUFFIX = _any("ordinal_suffixes")
_DAY_RE = r"(?P<day>\d{1,2})" + _SUFFIX + "?"
_YEAR_RE = r"(?P<year>\d{4}|'\d{2})"
# Connectors that split a written span into its two ends, tried in this order.
_SPAN_PATTERNS = [
    r"^(?:starting|beginning|start)\s+(?:on\s+|from\s+|in\s+)?(?P<a>.+?),?\s+(?:and\s+)?(?:ending|end|finishing)\s+(?:on\s+|in\s+|at\s+)?(?P<b>.+)$",
    r"^between\s+(?P<a>.+?)\s+and\s+(?P<b>.+)$",
    r"^(?:from\s+)?(?P<a>.+?)\s+(?:to|through|thru|till|until|up to|and ending)\s+(?P<b>.+)$",
    r"^(?:from\s+)?(?P<a>.+?)\s*(?:-|–|—)\s*(?P<b>.+)$",
]


@dataclass(frozen=True)
class Period:
    start: date
    end: date


@dataclass(frozen=True)
class Expression:
    """One end of a span as written: either fixed (has a year, or is relative to today) or floating."""

    fixed: Period | None = None
    in_year: Callable[[int], Period] | None = None  # the period in a given year (for floating ones)
    year: int | None = None

    def resolve(self, today: date) -> Period:
        """The period itself; a floating one is the most recent that has begun on or before today."""
        if self.fixed:
            return self.fixed
        assert self.in_year
        if self.year is not None:
            return self.in_year(self.year)
        candidate = self.in_year(today.year)
        return candidate if candidate.start <= today else self.in_year(today.year - 1)


def _month(year: int, month: int) -> Period:
    return Period(date(year, month, 1), date(year, month, calendar.monthrange(year, month)[1]))


def _months(year: int, first: int, last: int) -> Period:
    return Period(_month(year, first).start, _month(year, last).end)


def _quarter(year: int, q: int) -> Period:
    return _months(year, 3 * q - 2, 3 * q)


def _half(year: int, h: int) -> Period:
    return _months(year, 6 * h - 5, 6 * h)


def _year(year: int) -> Period:
    return Period(date(year, 1, 1), date(year, 12, 31))


def _day(year: int, month: int, day: int) -> Period:
    d = date(year, month, day)
    return Period(d, d)


def _full_year(text: str | None) -> int | None:
    if not text:
        return None
    text = text.strip("'’ ")
    return int(text) + 2000 if len(text) == 2 else int(text)


def _clean(text: str) -> str:
    text = text.lower().replace("’", "'").strip()
    text = re.sub(r"[?!;]+", " ", text)
    text = re.sub(r"\s+", " ", text).strip(" .,")
    text = re.sub("^" + _any("birthday_labels") + r"\s+", "", text)  # a birthday
    text = re.sub("^" + _any("leading_words") + r"\s+", "", text)
    text = re.sub("^" + _any("articles") + r"\s+", "", text)
    return text.strip()


def _relative_year(text: str, today: date) -> tuple[str, int | None]:
    """Pull a year given in words ("of last year") or digits out of the text."""
    joins = _any("year_joins")
    for words, offset in [(w, step) for part, step in (("year_before", -1), ("year_this", 0), ("year_after", 1))
                          for w in _said(part)]:
        pattern = rf"(?:\s*{joins}\s+|\s+)?{words}(?:'s)?"
        if re.search(pattern, text) and not re.fullmatch(rf"{words}", text):
            return re.sub(pattern, "", text).strip(), today.year + offset
    return text, None


_WHICH_PERIOD = re.compile(rf"(?P<which>{alternation(_said('this') + _said('before') + _said('after'))}) "
                           rf"(?P<unit>{_any('period_units')})")  # "last quarter", "this fiscal year"


def _relative(text: str, today: date) -> Period | None:
    """Periods computed from today: this/last/next month, quarter, half, year, week; year to date; N days."""
    if text in _said("now"):
        return Period(today, today)
    if text == "yesterday":
        return _relative(_clean("1 day ago"), today)
    if text in _said("day_before_yesterday"):
        return _relative("2 days ago", today)
    m = re.fullmatch(rf"(?:{_any('approximately')} )?(?P<n>[\w\- ]+?) (?P<unit>{_any('units')}s?) "
                     rf"{_any('back_from_now')}", text)
    if m and (n := parse_number_words(m["n"])) is not None:
        if m["unit"].startswith("year"):  # the year that many years back, whole
            return _year(today.year - int(n))
        if m["unit"].startswith("month"):
            index = today.year * 12 + today.month - 1 - int(n)
            return _month(index // 12, index % 12 + 1)
        d = today - timedelta(days=int(n) * (7 if m["unit"].startswith("week") else 1))
        return Period(d, d)
    m = re.fullmatch(rf"{_any('trailing')} (?P<n>[\w\- ]+?) (?P<unit>{_any('trailing_units')}s?)", text)
    if m and (n := parse_number_words(m["n"])) is not None:
        days = int(n) * (7 if m["unit"].startswith("week") else 1)
        return Period(today - timedelta(days=days), today)
    if text in _said("year_to_date"):
        return Period(date(today.year, 1, 1), today)
    if text in _said("month_to_date"):
        return Period(date(today.year, today.month, 1), today)
    if text in _said("quarter_to_date"):
        return Period(_quarter(today.year, (today.month - 1) // 3 + 1).start, today)
    m = _WHICH_PERIOD.fullmatch(text)
    if not m:
        return None
    step = 0 if m["which"] in _said("this") else 1 if m["which"] in _said("after") else -1
    unit = m["unit"]
    if unit == "week":
        monday = today - timedelta(days=today.weekday()) + timedelta(weeks=step)
        return Period(monday, monday + timedelta(days=6))
    if unit == "month":
        index = today.year * 12 + today.month - 1 + step
        return _month(index // 12, index % 12 + 1)
    if unit == "quarter":
        index = today.year * 4 + (today.month - 1) // 3 + step
        return _quarter(index // 4, index % 4 + 1)
    if unit == "half":
        index = today.year * 2 + (today.month - 1) // 6 + step
        return _half(index // 2, index % 2 + 1)
    return _year(today.year + step)


def _weekday(text: str, today: date) -> Period | None:
    m = re.fullmatch(rf"(?:(?P<last>{_any('weekday_before')}) )?(?P<day>" + "|".join(WEEKDAYS) + ")", text)
    if not m:
        return None
    back = (today.weekday() - WEEKDAYS[m["day"]]) % 7
    if m["last"] and back == 0:
        back = 7
    d = today - timedelta(days=back)
    return Period(d, d)


def resolve_past_day(text: str, today: date) -> date | None:
    """A day its own words put behind today ("yesterday", "3 days ago", "last Friday"); None for any
    other words (a day named bare is ahead for `resolve_future_day`)."""
    text = _clean(text)
    period = _relative(text, today) if text not in _said("now") else None
    if period is None and re.match(_any("weekday_before") + " ", text):
        period = _weekday(text, today)
    return period.start if period is not None and period.start == period.end else None


def parse_expression(text: str, today: date) -> Expression | None:
    """Read one date or period (not a span)."""
    text = _clean(text)
    if not text:
        return None
    if (fixed := _relative(text, today)) or (fixed := _weekday(text, today)):
        return Expression(fixed=fixed)
    text, word_year = _relative_year(text, today)

    def floating(in_year: Callable[[int], Period], year: int | None) -> Expression:
        year = year if year is not None else word_year
        return Expression(in_year=in_year, year=year)

    try:
        if m := re.fullmatch(r"(\d{1,2})/(\d{1,2})/(\d{4}|\d{2})", text):
            return Expression(fixed=_day(_full_year(m[3]), int(m[1]), int(m[2])))
        if m := re.fullmatch(r"(\d{4})-(\d{1,2})-(\d{1,2})", text):
            return Expression(fixed=_day(int(m[1]), int(m[2]), int(m[3])))
        if m := re.fullmatch(r"(\d{1,2})/(\d{1,2})", text):
            month, day = int(m[1]), int(m[2])
            return floating(lambda y: _day(y, month, day), None)
        if m := re.fullmatch(r"(\d{1,2})/(\d{4})", text):
            return Expression(fixed=_month(int(m[2]), int(m[1])))
        return _named_period(text, floating)
    except ValueError:  # a day that does not exist (February 30th)
        return None


def _named_period(text: str, floating) -> Expression | None:
    """Quarters, halves, fiscal and calendar years, months and days named in words."""
    year_tail = r"(?:,?\s*(?:of\s+|in\s+)?" + _YEAR_RE + r")?"
    # Quarters: Q1 2023, 1Q23, Q1 '23, first quarter of 2023, quarter 3.
    for pattern in (r"q(?P<n>[1-4])(?:\s*(?:fy)?\s*(?P<y>\d{4}|'?\d{2}))?",
                    r"(?P<n>[1-4])q\s*(?P<y>\d{4}|'?\d{2})?",
                    r"(?:fy\s*(?P<y>\d{4}|'?\d{2})\s+)q(?P<n>[1-4])",
                    r"(?P<o>first|second|third|fourth|1st|2nd|3rd|4th|last) (?:fiscal |calendar )?quarter"
                    r"(?:,?\s*(?:of\s+|in\s+)?(?:fy\s*)?(?P<y>\d{4}|'\d{2}))?",
                    r"quarter (?P<n>[1-4])(?:,?\s*(?:of\s+|in\s+)?(?P<y>\d{4}|'\d{2}))?"):
        if m := re.fullmatch(pattern, text):
            n = int(m["n"]) if m.groupdict().get("n") else ORDINALS[m["o"]]
            return floating(lambda y, n=n: _quarter(y, n), _full_year(m["y"]))
    # Halves: H1 2023, 2H25, first half of 2023.
    for pattern in (r"h(?P<n>[12])(?:\s*(?P<y>\d{4}|'?\d{2}))?",
                    r"(?P<n>[12])h\s*(?P<y>\d{4}|'?\d{2})?",
                    r"(?P<o>first|second|1st|2nd|last) half(?:,?\s*(?:of\s+|in\s+)?(?:fy\s*)?(?P<y>\d{4}|'\d{2}))?"):
        if m := re.fullmatch(pattern, text):
            n = int(m["n"]) if m.groupdict().get("n") else min(ORDINALS[m["o"]], 2)
            return floating(lambda y, n=n: _half(y, n), _full_year(m["y"]))
    # Years: 2022, FY21, FY 2021, fiscal year 2022, calendar year 2022.
    if m := re.fullmatch(_any("year_labels") + r"?\s*'?(?P<y>\d{4}|\d{2})", text):
        if len(m["y"]) == 4 or text != m["y"]:  # a bare two-digit number is no year
            return Expression(fixed=_year(_full_year(m["y"])))
    # Days and months in words: January 15, 2023; 15 Jan 2023; the 3rd of March; March; nov '23.
    for pattern in (_MONTH_RE + r"\s+" + _DAY_RE + year_tail,
                    _DAY_RE + r"\s+(?:of\s+)?" + _MONTH_RE + year_tail):
        if m := re.fullmatch(pattern, text):
            month, day = MONTHS[m["month"]], int(m["day"])
            return floating(lambda y: _day(y, month, day), _full_year(m["year"]))
    if m := re.fullmatch(rf"(?:{_any('month_labels')}\s+)?" + _MONTH_RE + year_tail, text):
        month = MONTHS[m["month"]]
        return floating(lambda y: _month(y, month), _full_year(m["year"]))
    return None


def split_span(text: str) -> tuple[str, str] | None:
    """'from March to May 2023' -> ('March', 'May 2023'); None when the text is one period."""
    cleaned = _clean(text)
    if _relative(cleaned, date(2000, 1, 1)) is not None:  # "year to date" is one period, not a span
        return None
    for pattern in _SPAN_PATTERNS:
        if m := re.fullmatch(pattern, cleaned):
            return m["a"], m["b"]
    return None


def resolve_span(first: str, last: str, today: date) -> Period | None:
    """The period from the first day of `first` to the last day of `last`; either may be empty."""
    try:
        return _resolve_span(first, last, today)
    except ValueError:  # a day that does not exist in the year it resolves to (February 29th, 2023)
        return None


def _resolve_span(first: str, last: str, today: date) -> Period | None:
    a = parse_expression(first, today) if first.strip() else None
    b = parse_expression(last, today) if last.strip() else None
    if a is None and b is None:
        return None
    if b is None:
        return a.resolve(today) if not last.strip() else None
    if a is None:
        return b.resolve(today) if not first.strip() else None
    a_floats = a.fixed is None and a.year is None
    b_floats = b.fixed is None and b.year is None
    if a_floats and not b_floats:
        # A year written on the end applies to the start too: the latest such start not after the end.
        end = b.resolve(today)
        start = a.in_year(end.start.year)
        if start.start > end.start:
            start = a.in_year(end.start.year - 1)
        return Period(start.start, end.end)
    start = a.resolve(today)
    if b_floats:
        # The end is the first such period on or after the start.
        end = b.in_year(start.start.year)
        if end.start < start.start:
            end = b.in_year(start.start.year + 1)
        return Period(start.start, end.end)
    return Period(start.start, b.resolve(today).end)


def resolve_period(text: str, today: date) -> Period | None:
    """A period as written: one expression or a span of two."""
    expression = parse_expression(text, today)
    if expression is not None:
        try:
            return expression.resolve(today)
        except ValueError:  # a day that does not exist in the year it resolves to
            return None
    if span := split_span(text):
        return resolve_span(*span, today)
    return None


def format_date(d: date) -> str:
    return d.strftime("%m/%d/%Y")


def parse_today(text: str) -> date:
    return date.fromisoformat(text)


# --- days ahead (a reservation, an appointment) --------------------------------------------------------

_HOLIDAYS = {"new year's day": (1, 1), "valentine's day": (2, 14), "valentines day": (2, 14),
             "independence day": (7, 4), "fourth of july": (7, 4), "halloween": (10, 31),
             "christmas eve": (12, 24), "christmas": (12, 25), "christmas day": (12, 25), "new year's eve": (12, 31)}
_PART_OF_DAY = r"(?:\s+(?:night|evening|morning|afternoon|for (?:lunch|dinner|brunch)))?"
_TOMORROW = r"(?:tomorrow|tommorow|tomorow|tommorrow)"


def _next_on_or_after(month: int, day: int, today: date) -> date | None:
    for year in (today.year, today.year + 1):
        try:
            d = date(year, month, day)
        except ValueError:
            continue
        if d >= today:
            return d
    return None


def resolve_future_day(text: str, today: date) -> date | None:
    """A day ahead of today, as people name the day of a booking: 'tonight', 'tomorrow night', 'the day
    after tomorrow', 'this Saturday', 'friday the 31st', 'the 10th of february', "valentine's day". A day
    named without a year is its next occurrence; a full date is read as written."""
    cleaned = _clean(text)
    cleaned = re.sub(_PART_OF_DAY + "$", "", cleaned).strip()
    if cleaned in _said("today_ahead"):
        return today
    if re.fullmatch(_TOMORROW, cleaned):
        return today + timedelta(days=1)
    if re.fullmatch(_any("day_after") + " " + _TOMORROW, cleaned):
        return today + timedelta(days=2)
    if cleaned in _HOLIDAYS:
        return _next_on_or_after(*_HOLIDAYS[cleaned], today)
    m = re.fullmatch(rf"(?:{_any('weekday_ahead')} )?(?P<day>" + "|".join(WEEKDAYS) + r")"
                     rf"(?: {_any('weekday_joins')} (?P<n>\d{{1,2}}){_SUFFIX}?)?", cleaned)
    if m:
        if m["n"]:  # "friday the 31st": the next 31st that is a Friday, within a year
            for offset in range(0, 400):
                d = today + timedelta(days=offset)
                if d.day == int(m["n"]) and d.weekday() == WEEKDAYS[m["day"]]:
                    return d
            return None
        ahead = (WEEKDAYS[m["day"]] - today.weekday()) % 7
        return today + timedelta(days=ahead or (7 if cleaned.startswith("next") else 0))
    days = "|".join(WEEKDAYS)
    on, of, which, week = (_any(part) for part in ("week_days_on", "week_days_of", "this_or_next", "week"))
    m = (re.fullmatch(rf"(?:{on} )?(?P<day>{days})(?: {of})? (?P<week>{which}) {week}", cleaned)
         or re.fullmatch(rf"(?P<week>{which}) {week}(?: {on})? (?P<day>{days})", cleaned))
    if m:  # "friday next week": that day of the week after this one (weeks begin on Monday)
        ahead = m["week"] in _said("after")
        monday = today - timedelta(days=today.weekday()) + timedelta(days=7 if ahead else 0)
        day = monday + timedelta(days=WEEKDAYS[m["day"]])
        return day if day >= today else None
    m = re.fullmatch(r"(?P<n>\d{1,2})" + _SUFFIX, cleaned)
    if m:  # "the 9th": the next such day of a month
        for ahead in range(13):
            index = today.year * 12 + today.month - 1 + ahead
            try:
                d = date(index // 12, index % 12 + 1, int(m["n"]))
            except ValueError:
                continue
            if d >= today:
                return d
        return None
    period = resolve_period(text, today)
    if period is None or period.start != period.end:
        return None
    if re.search(r"\b\d{4}\b", cleaned) or period.start >= today:
        return period.start
    return _next_on_or_after(period.start.month, period.start.day, today)
