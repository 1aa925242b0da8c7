"""Lookups: searches a plan may make to find an identifier the request names but does not give.

A goal's required argument that takes the output of a search (`accepts_output`, a search's `rest.finds`)
and of no goal of the request gets that search as a lookup goal: the translator fills the search's words
from the request ("the song Blue Moon" -> its query), and the planner decides whether calling it costs less
than asking the user (`stages.plan`'s costs).
"""

from __future__ import annotations

from pipeline.packs.pack import Pack


def lookup_goals(pack: Pack, goals: list[str]) -> dict[str, str]:
    """Lookup goal -> the goal of `goals` whose argument it finds, in the order of `goals`."""
    apis = {name: pack.spec.goals[name].api for name in goals if name in pack.spec.goals}
    produced = {pack.spec.apis[api].produces for api in apis.values() if api in pack.spec.apis}
    found: dict[str, str] = {}
    for goal, api_name in apis.items():
        api = pack.spec.apis.get(api_name)
        if api is None:
            continue
        for argument in api.arguments:
            accepts = pack.spec.arguments[argument].accepts_output if argument in pack.spec.arguments else []
            if argument in api.optional or not accepts or produced & set(accepts):
                continue  # optional, takes no output, or fed by a goal the request asked for
            for kind in accepts:
                search = _search_of(pack, kind)
                if search and search not in goals and search not in found:
                    found[search] = goal
                    break
    return found


def _search_of(pack: Pack, kind: str) -> str | None:
    """The goal of the search API whose output is `kind`, when it needs only words (no identifier)."""
    for name, api in pack.spec.apis.items():
        if api.produces != kind or api.rest is None or api.rest.action != "search" or not api.rest.finds:
            continue
        required = [a for a in api.arguments if a not in api.optional]
        if required and all(not pack.spec.arguments[a].accepts_output for a in required):
            try:
                return pack.goal_of_api(name)
            except KeyError:
                return None
    return None
