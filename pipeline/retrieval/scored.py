"""A goal retrieval chose for a request, with how well it scored and the words it was chosen from."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class ScoredGoal:
    goal: str
    score: float
    source: str = ""  # the words of the request it was retrieved from
    # Words its asking clause points back at ("..., can you update her record"): they give the arguments
    # the source itself does not.
    context: str = ""
    # Which judge chose it: retrieval, the goal head (a request retrieval scored too low), the words that
    # ask to find or the values only a search takes (`_the_search_said`), or the goal head over a near-tie.
    chosen_by: str = "retrieval"
