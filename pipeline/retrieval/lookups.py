"""Lookups: searches and lists a plan may call to find an identifier the request names but does not give.

A goal's required argument that takes the output of a search or a list (`accepts_output`, their `rest.finds`)
and of no goal of the request gets one of them as a lookup goal:

- a list whose picks the goal's words say ("the best rated album" -> `/albums/best_rated`, whose picks are
  best, rated): the request names the thing by the list it is on, and no name is there to search by;
- else the search: the translator fills its words from the request ("the song Blue Moon" -> its query).

The planner decides whether calling it costs less than asking the user (`stages.plan`'s costs).
"""

from __future__ import annotations

from pipeline.language.picks import picks_said
from pipeline.packs.pack import Pack


def lookup_goals(pack: Pack, goals: list[str], words: dict[str, str] | None = None) -> dict[str, str]:
    """Lookup goal -> the goal of `goals` whose argument it finds, in the order of `goals`; `words`: each
    goal's words, which may name a list to find by."""
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
            listed = _list_said(pack, accepts, (words or {}).get(goal, ""))
            for lookup in ([listed] if listed else []) + [_search_of(pack, kind) for kind in accepts]:
                if lookup and lookup not in goals and lookup not in found:
                    found[lookup] = goal
                    break
    return found


def _list_said(pack: Pack, kinds: list[str], words: str) -> str | None:
    """The goal of the list, among those whose output is of `kinds` and that need no value, whose picks the
    words say most of."""
    if not words:
        return None
    best, said = None, 0
    for name, api in pack.spec.apis.items():
        if api.produces not in kinds or any(a not in api.optional for a in api.arguments):
            continue
        n = picks_said(api.rest, words)
        if n > said:
            try:
                best, said = pack.goal_of_api(name), n
            except KeyError:
                continue
    return best


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
