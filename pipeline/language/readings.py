"""What a text's words can be read as, per argument: spans, the value each reads as, and whether it is
kept (and if not, why). The grammar writes only kept readings; the Run keeps them all, to inspect.

>>> r = Readings("party_size", "a table for 4")
>>> r.add((12, 13), "4"); r.add((12, 13), "4")
>>> r.strings()
['4']
>>> r.drop(r.items[0], "not this argument's value (p=0.10)"); r.strings()
[]
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Reading:
    argument: str
    start: int
    end: int
    text: str
    value: str  # what the words read as (themselves, for words kept as written)
    probability: float | None = None  # from the slot head, when one scored it
    kept: bool = True
    why: str = ""  # why it was dropped
    source: str = ""  # the words it was read in
    # Whether the grammar may write the words themselves: not where the argument's normaliser would read
    # them otherwise ("nine years back" as a year is 2010, as a count 9): then only the value is written.
    as_written: bool = True

    @property
    def span(self) -> tuple[int, int]:
        return self.start, self.end


class Readings:
    def __init__(self, argument: str, text: str):
        self.argument, self.text = argument, text
        self.items: list[Reading] = []

    def add(self, span: tuple[int, int], value: str | None = None, as_written: bool = True) -> None:
        a, b = span
        value = self.text[a:b] if value is None else value
        if not any(r.span == (a, b) and r.value == value for r in self.items):
            self.items.append(Reading(self.argument, a, b, self.text[a:b], value, source=self.text,
                                      as_written=as_written))

    def drop(self, reading: Reading, why: str) -> None:
        reading.kept, reading.why = False, why

    @property
    def kept(self) -> list[Reading]:
        return [r for r in self.items if r.kept]

    def strings(self) -> list[str]:
        """The kept spans' words (where they may be written) and the values they read as, each once, in order."""
        return list(dict.fromkeys(s for r in self.kept for s in ((r.text, r.value) if r.as_written else (r.value,))))
