"""Two readings of one value compared in one form: what a pack's normaliser wrote (dates as MM/DD/YYYY,
amounts as 1200.00, names capitalised) against a service's canonical value (SGD: dates as 2019-03-08,
amounts as 1200, names as the service lists them).

>>> same_value("date", "03/08/2019", "2019-03-08")
True
>>> same_value("amount", "1200.00", "1200")
True
>>> same_value("title_text", "Sino", "sino.")
True
>>> same_value("e164", "+14155550142", "415-555-0142"), same_value("phone", "(415) 555-0142", "415.555.0142")
(True, True)
"""

from __future__ import annotations

import re
from datetime import datetime
from decimal import Decimal, InvalidOperation

from pipeline.values.normalizers import NORMALIZERS
from pipeline.values.numbers import parse_amount

# What SGD writes for "no constraint on this slot": an argument left out.
NO_CONSTRAINT = "dontcare"


def canonical(normalizer: str, value: str) -> str:
    text = str(value).strip()
    if normalizer in ("date", "future_date"):
        for form in ("%m/%d/%Y", "%Y-%m-%d"):
            try:
                return datetime.strptime(text, form).date().isoformat()
            except ValueError:
                continue
    if normalizer in ("phone", "e164"):  # one number however it is written: its normaliser's form
        read = NORMALIZERS[normalizer](text)
        if read is not None:
            return read
    if normalizer in ("amount", "decimal", "integer"):
        number = parse_amount(text)
        if number is None:
            try:
                number = Decimal(text)
            except InvalidOperation:
                number = None
        if number is not None:
            return format(number.normalize(), "f")
    return re.sub(r"[^\w]+", " ", text.lower()).strip()


def same_value(normalizer: str, ours: str | None, theirs: str | None) -> bool:
    if ours is None or theirs is None:
        return ours is theirs
    return canonical(normalizer, ours) == canonical(normalizer, theirs)


def same_call(normalizers: dict[str, str], optional: dict[str, str | None], ours: dict[str, str],
              theirs: dict[str, str]) -> bool:
    """One call's arguments against another's: an argument one side leaves out is the API's default (or
    no constraint, `dontcare`), since the service would apply the same."""
    def effective(args: dict[str, str], name: str) -> str | None:
        value = args.get(name, optional.get(name))
        return None if value is None or value == NO_CONSTRAINT else value

    return all(same_value(normalizers.get(name, "lowercase_text"), effective(ours, name), effective(theirs, name))
               for name in set(ours) | set(theirs))
