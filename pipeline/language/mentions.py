"""Which argument takes which words, where several claim the same ones: each argument one mention, each
mention one argument, the matching the slot head finds likeliest overall.

>>> from pipeline.language.readings import Readings
>>> text = "flights out of Oslo"
>>> readings = {name: Readings(name, text) for name in ("origin", "destination")}
>>> for name, p in (("origin", 0.97), ("destination", 0.95)):
...     readings[name].add((15, 19)); readings[name].items[0].probability = p
>>> one_argument_per_mention(readings)
>>> [r.text for r in readings["origin"].kept], [r.text for r in readings["destination"].kept]
(['Oslo'], [])

Said as the answer to "where to?", the same words are the destination's:

>>> for found in readings.values():
...     found.items[0].kept = True
>>> one_argument_per_mention(readings, favoured="destination")
>>> [r.text for r in readings["origin"].kept], [r.text for r in readings["destination"].kept]
([], ['Oslo'])
"""

from __future__ import annotations

import math
from collections import defaultdict

import numpy as np

from pipeline.language.readings import Readings


def _mentions(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The words of overlapping spans joined: each place the text mentions a value."""
    out: list[list[int]] = []
    for start, end in sorted(spans):
        if out and start < out[-1][1]:
            out[-1][1] = max(out[-1][1], end)
        else:
            out.append([start, end])
    return [(a, b) for a, b in out]


def _log_odds(p: float | None) -> float:
    p = min(max(p if p is not None else 1.0, 1e-4), 1 - 1e-4)
    return max(math.log(p / (1 - p)), 0.01)  # a reading kept against the head still counts for something


def _best_matching(arguments: list[str], mentions: list[int], score: dict[tuple[str, int], float]) -> dict[str, int]:
    """argument -> mention, each mention to one argument at most and each argument to one mention or
    none, with the greatest total log-odds (an assignment problem: one column of "none" per argument)."""
    from scipy.optimize import linear_sum_assignment

    never = -1e9
    table = np.full((len(arguments), len(mentions) + len(arguments)), never)
    for i, argument in enumerate(arguments):
        for j, mention in enumerate(mentions):
            table[i, j] = score.get((argument, mention), never)
        table[i, len(mentions) + i] = 0.0  # this argument takes none
    rows, columns = linear_sum_assignment(table, maximize=True)
    return {arguments[i]: mentions[j] for i, j in zip(rows, columns) if j < len(mentions) and table[i, j] > never}


def _inside(inner, outer) -> bool:
    return outer.start <= inner.start and inner.end <= outer.end and inner.span != outer.span


def _drop_spans_over_others(readings: dict[str, Readings], named: frozenset = frozenset()) -> None:
    """A reading that runs over another argument's value, where a likelier reading of its own argument lies
    inside it, is dropped: "drama" is the genre of "a drama directed by Ann Lee", and the words after it
    are the director's. Kept, it would join the two into one mention, and only one could have it. Not one
    whose words name its argument (`named`: "a service called Shop Login" is the whole name)."""
    kept = [r for found in readings.values() for r in found.kept]
    for found in readings.values():
        for r in found.kept:
            if (r.argument, r.start, r.end) in named:
                continue
            own = [o for o in found.kept if _inside(o, r) and (o.probability or 0.0) > (r.probability or 0.0)]
            if own and any(_inside(o, r) for o in kept if o.argument != r.argument):
                found.drop(r, f"runs over another argument's value; {own[0].text!r} inside it is likelier")


# What being asked for is worth in the matching, as log-odds: "to Atlanta" said when the destination was
# asked is the destination's, however close the head finds the origin (it does not see the question).
ASKED = 4.6


def one_argument_per_mention(readings: dict[str, Readings], favoured: str | None = None,
                             named: frozenset[tuple[str, int, int]] = frozenset()) -> None:
    """Where several arguments claim the same words, each argument takes one mention and each mention goes
    to one argument: the matching the head finds likeliest overall (the sum of log-odds). "out of Denver" is
    the origin's, not also the destination's; in "from Chicago to Boston" each place goes where the pair is
    likeliest, even where the head finds Boston the likelier origin on its own; "starring Ann Lee" is the
    star's, not the director's. The same words written into two arguments of a call are a value nobody
    gave to one of them. Arguments no other argument competes with keep all their readings. The argument a
    question asked for (`favoured`) takes the mention it claims unless two others together are likelier.
    A reading whose words name its argument (`named`: argument, start, end; "the restaurant The Oak Room"
    of restaurant_id) counts as certain, whatever the head gave it: the user said whose value it is."""
    _drop_spans_over_others(readings, named)
    kept = [r for found in readings.values() for r in found.kept]
    mentions = _mentions([r.span for r in kept])
    where = lambda r: next(i for i, (a, b) in enumerate(mentions) if a <= r.start and r.end <= b)  # noqa: E731
    score: dict[tuple[str, int], float] = {}
    for r in kept:
        key = (r.argument, where(r))
        p = 1.0 if (r.argument, r.start, r.end) in named else r.probability
        score[key] = max(score.get(key, 0.0), _log_odds(p) + (ASKED if r.argument == favoured else 0.0))
    # The arguments some other argument competes with, and every mention they claim. The best matching
    # of these is the best matching of each group that competes (the sum splits over groups).
    claimants: dict[int, set[str]] = defaultdict(set)
    for argument, mention in score:
        claimants[mention].add(argument)
    arguments = sorted({a for group in claimants.values() if len(group) > 1 for a in group})
    if not arguments:
        return
    claimed = sorted({m for a, m in score if a in arguments})
    matched = _best_matching(arguments, claimed, score)
    owner = {m: a for a, m in matched.items()}
    for found in readings.values():
        for r in found.kept:
            m = where(r)
            if m not in claimed or matched.get(r.argument) == m:
                continue
            why = (f"the value of {owner[m]} (one argument per mention)" if m in owner
                   else f"{r.argument} takes another mention")
            found.drop(r, why)
