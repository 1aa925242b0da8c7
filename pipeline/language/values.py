"""Which of the spans the rules read are an argument's value: the slot head's judgement on each.

The rules (normalisers) say what words *can* be read as ("4" is a count, "Boston" a place); the slot
head says which argument, if any, they *are* the value of, from the words around them ("4 beds, 2 baths";
"from Boston to Denver"). A reading the head gives less than its threshold is dropped; a span read as the
same value by several arguments stays only with the likeliest, when it is clearly likelier. Every reading
keeps its probability and, dropped, why: the Run shows them.
"""

from __future__ import annotations

from collections import defaultdict

from pipeline.language.linking import learned_parts, linker_for
from pipeline.language.readings import Readings


# A span stays with the likeliest of several arguments only when the head tells them apart by this much;
# closer ("from Chicago to Boston": both are places of a flight), each keeps it and the LLM chooses.
CLEAR_MARGIN = 0.1


def link_values(pack, text: str, readings: dict[str, Readings]) -> dict[str, Readings]:
    # A pack with example requests was written with its rules in mind, and the head (trained on how people
    # fill SGD services' slots) drops values those rules read right: on the quickbooks pack its realistic
    # dev set fell from 154 to 58 of 160. So the head judges packs made from a schema alone.
    if not learned_parts(pack)["value"]:
        return readings
    linker = linker_for(pack)
    threshold = linker.value_threshold
    for name, found in readings.items():
        probabilities = linker.value_probabilities(text, [r.span for r in found.items], name)
        for reading, p in zip(found.items, probabilities):
            reading.probability = round(p, 4)
            if p < threshold:
                found.drop(reading, f"not {name}'s value by its words (p={p:.2f} < {threshold:.2f})")
    same: dict[tuple, list] = defaultdict(list)
    for name, found in readings.items():
        for reading in found.kept:
            same[(reading.span, reading.value)].append((found, reading))
    for claims in same.values():
        if len(claims) < 2:
            continue
        best = max(claims, key=lambda c: c[1].probability or 0.0)[1]
        for found, reading in claims:
            if reading is not best and (best.probability or 0.0) - (reading.probability or 0.0) >= CLEAR_MARGIN:
                found.drop(reading, f"the value of {best.argument} (p={best.probability:.2f}), not of "
                                    f"{reading.argument} (p={reading.probability:.2f})")
    return readings
