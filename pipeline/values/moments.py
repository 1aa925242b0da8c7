"""A moment: a day and a time of it, as an API's `date-time` takes it (RFC 3339, `2026-06-12T15:00:00Z`).

The day is read as people name it, past or future from its own words: "yesterday" and "last Friday" are
behind `today`, "Friday" and "June 12" the next such day (`dates.resolve_future_day`), a full date as
written. The time is a time only where its words say so ("3pm", "15:30", "at 9", "noon"; `TIME_MARK`): in
"June 12" the 12 is the day. A day alone is its start (00:00), as an API compares a day with its moments;
a time with no day reads as nothing (which day is the user's to say). A moment written in ISO form is read
as written. No time zone is known: the moment is written in UTC (`Z`).

>>> today = date(2026, 5, 4)  # a Monday
>>> [moment(t, today) for t in ("Friday at 3pm", "tomorrow 9:30", "noon on June 12", "yesterday")]
['2026-05-08T15:00:00Z', '2026-05-05T09:30:00Z', '2026-06-12T12:00:00Z', '2026-05-03T00:00:00Z']
>>> moment("at 3pm on the 14th of May", today), moment("last Friday 9am", today), moment("tomorrow evening", today)
('2026-05-14T15:00:00Z', '2026-05-01T09:00:00Z', None)
>>> moment("2026-07-01T08:15", today), moment("at 5pm", today), moment("the blue room", today)
('2026-07-01T08:15:00Z', None, None)
>>> moment("room 4 starting Monday at 9:00 and ending", today), moment("Monday at 9:00", today)
(None, '2026-05-04T09:00:00Z')
"""

from __future__ import annotations

import re
from datetime import date, datetime

from pipeline.values import dates
from pipeline.values.lexicon import any_of
from pipeline.values.normalizers import TIME_MARK, time_of_day, wholly_a_time

_ISO = re.compile(r"(\d{4}-\d{2}-\d{2})(?:[T ](\d{1,2}:\d{2})(?::(\d{2}))?)?(?:Z|[+-]\d{2}:?\d{2})?")
_JOINS = any_of("dates", "moment_joins")
_GLUE = re.compile(rf"^(?:{_JOINS}|,)\s+|\s*(?:,|\b{_JOINS})$")  # "Friday at 3pm", "3pm on Friday", "June 12, 10:00"
_PART_OF_DAY = re.compile(rf"\b{any_of('dates', 'parts_of_day')}\b")


def a_day(text: str, today: date) -> date | None:
    """The one day the words name: behind today where its words put it there ("yesterday", "last
    Friday"), else the next such day; None for words naming no single day."""
    return dates.resolve_past_day(text, today) or dates.resolve_future_day(text, today)


def moment(text: str, today: date) -> str | None:
    """The moment the words name (the module docstring's rules), in RFC 3339; None for words that name none."""
    cleaned = re.sub(r"\s+", " ", text.strip().strip(".,")).strip()
    if iso := _ISO.fullmatch(cleaned):
        clock = (iso.group(2) or "00:00").zfill(5)
        try:
            when = datetime.fromisoformat(f"{iso.group(1)}T{clock}:{iso.group(3) or '00'}")
        except ValueError:
            return None
        return when.strftime("%Y-%m-%dT%H:%M:%SZ")
    if not TIME_MARK.search(cleaned):
        if _PART_OF_DAY.search(cleaned):
            return None  # "tomorrow afternoon": a time is meant and none is said
        day = a_day(cleaned, today)
        return f"{day.isoformat()}T00:00:00Z" if day is not None else None
    clock = time_of_day(cleaned)  # read in all the words: "tonight at 8" is 20:00
    if clock is None:
        return None
    words = cleaned.split(" ")
    # the time's words are the fewest at either end that say a time; the rest name the day
    for time_words, day_words in [*((words[cut:], words[:cut]) for cut in range(len(words) - 1, 0, -1)),
                                  *((words[:cut], words[cut:]) for cut in range(1, len(words)))]:
        time_text = " ".join(time_words)
        if wholly_a_time(time_text):
            day = a_day(_GLUE.sub("", " ".join(day_words)).strip(" ,"), today)
            if day is not None:
                return f"{day.isoformat()}T{clock}:00Z"
    return None
