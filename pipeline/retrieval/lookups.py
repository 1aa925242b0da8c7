"""Lookups: searches and lists a plan may call to find an identifier the request names but does not give.

A goal's required argument that takes the output of a search or a list (`accepts_output`, their `rest.finds`)
and of no goal of the request gets one of them as a lookup goal (an optional one only by the first way):

- the search or list one of whose own arguments the words give a closed value of ("the pets that are
  sold": the pets by status): the thing is one of those the words pick;

- the current one's list, where the words say the thing is the speaker's own ("my first playlist" ->
  `/me/playlists`, beside `/users/{user_id}/playlists`);
- a read of another resource the words name, whose answer holds the identifier ("the label of the album
  Blue Moon" -> the album's read, whose `label.id` is the label's): the thing is named through that one,
  which is looked up in turn (its search, with the same words); a resource of people is named by a
  person's name too ("a song by Ana Ruiz" -> the artist's songs, the artist by the search); the thing it
  is named through is the narrower one ("the newest album of Ana Ruiz" is one of hers, not of all);
- a read of the things related to one of its own resource whose path words the goal's words say ("the
  first album similar to Blue Train" -> `/albums/{album_id}/similar`): that one is looked up in turn;
- a list whose picks the goal's words say ("the best rated album" -> `/albums/best_rated`, whose picks are
  best, rated): the request names the thing by the list it is on, and no name is there to search by;
- else the search: the translator fills its words from the request ("the song Blue Moon" -> its query);
  a person the words name by name is searched for first, whatever else they say;
- else the one call that needs no value and answers one such thing (`/me`: a user's id is the current
  user's where no other thing is named to find it through and the request gives none);
- else, with no search for it, the reads whose answers hold it, when they all read one other resource
  (a network found only inside a show's answer): that one is named and looked up in turn.

No way goes through what the goal's other arguments identify (the playlist a track is to be added to
holds no such track yet), nor, where the words name the thing by its own noun and a name ("the album Night
Lights"), through another thing: that one is searched for.

The planner decides whether calling it costs less than asking the user (`stages.plan`'s costs).
"""

from __future__ import annotations

from pipeline.language.names import names_a_person
from pipeline.language.readers import reader
from pipeline.language.picks import named_itself, own_name_phrase, picks_said, resources_named, stems, value_said
from pipeline.language.words import PERSON_NOUNS, says_its_own
from pipeline.packs.pack import Pack
from pipeline.packs.rest import identified, paged_resource, words_after_the_identifier
from pipeline.values.normalizers import _stem


def lookup_goals(pack: Pack, goals: list[str], words: dict[str, str] | None = None,
                 said_by: dict[str, str] | None = None) -> dict[str, str]:
    """Lookup goal -> the goal whose argument it finds (one of `goals`, or a lookup before it), in the order
    of `goals`; `words`: each goal's words, which may name a list or a resource to find by. `said_by`
    receives each lookup's words: its goal's, or, for a search of a thing the words name by its noun and its
    own name, those alone ("track Blue Moon" of "add the track Blue Moon to my playlist Road Trip")."""
    words = dict(words or {})
    found: dict[str, str] = {}
    seen: dict[str, set[str]] = {}  # goal -> the resources its chain of lookups went through: never again
    queue = [g for g in goals if g in pack.spec.goals]
    while queue:
        goal = queue.pop(0)
        api = pack.spec.apis.get(pack.spec.goals[goal].api)
        if api is None:
            continue
        fed = _fed_by(goal, found)  # this lookup and the goals it finds values for: none of them feeds it
        produced = {pack.spec.apis[pack.spec.goals[g].api].produces for g in [*goals, *found]
                    if g not in fed and g in pack.spec.goals and pack.spec.goals[g].api in pack.spec.apis}
        own = api.rest.resource if api.rest else ""
        for argument in api.arguments:
            accepts = pack.spec.arguments[argument].accepts_output if argument in pack.spec.arguments else []
            if not accepts or produced & set(accepts):
                continue  # takes no output, or fed by another goal
            said, wanted = words.get(goal, ""), identified(argument) or own
            picked_by = _picked_by_said(pack, wanted, accepts, said)
            if argument in api.optional and picked_by is None:
                continue  # an optional one is looked up only where the words say which to take
            # what the call's other arguments identify holds it, or will ("add the song X to my playlist")
            holding = {identified(a) for a in api.arguments if a != argument} - {""}
            chain = seen.get(goal, set()) | {own, wanted} | holding
            by_name = wanted in PERSON_NOUNS and names_a_person(said)  # a person named by name: the search
            through = None if named_itself(wanted, said) else _through_the_named(pack, argument, accepts, said, chain)
            ways = [picked_by] if by_name else [picked_by, _the_speakers_list(pack, wanted, accepts, said), through,
                                       _related_said(pack, argument, accepts, said), _list_said(pack, accepts, said)]
            searches = [_search_of(pack, kind, wanted, argument) for kind in accepts]
            ways += [*searches, _the_one_there(pack, wanted, accepts), _through_the_only(pack, argument, accepts, chain)]
            for lookup in ways:
                if lookup and lookup not in goals and lookup not in found:
                    found[lookup] = goal
                    words.setdefault(lookup, (lookup in searches and own_name_phrase(wanted, said)) or said)
                    seen[lookup] = chain
                    queue.append(lookup)
                    break
    if said_by is not None:
        said_by.update({lookup: words[lookup] for lookup in found})
    return found


def _picked_by_said(pack: Pack, resource: str, kinds: list[str], words: str) -> str | None:
    """The goal of the one search or list of the resource (among `kinds`' producers, needing no other
    thing's identifier) one of whose own arguments the words give a closed value of (`picks.value_said`:
    "the pets that are sold": the pets by status); of several, the one that needs nothing else (a list by
    mood, not a search by words and mood). The thing is one of those the words pick, not one to ask for.
    None where no such call's value is said, or several calls' are alike."""
    if not words:
        return None
    found, by_it_alone = [], []  # by_it_alone: those that need nothing else (no search words)
    for name, api in pack.spec.apis.items():
        rest = api.rest
        if api.produces not in kinds or api.effects or rest is None or rest.action not in ("search", "list") \
                or not rest.finds or rest.resource != resource:
            continue
        required = [a for a in api.arguments if a not in api.optional]
        if any(pack.spec.arguments[a].accepts_output for a in required):
            continue
        if any(not identified(a) and value_said(pack, a, words) for a in api.arguments):
            try:
                found.append(pack.goal_of_api(name))
            except KeyError:
                continue
            if not required:
                by_it_alone.append(found[-1])
    return by_it_alone[0] if len(by_it_alone) == 1 else found[0] if len(found) == 1 else None


def _fed_by(goal: str, found: dict[str, str]) -> set[str]:
    """The goal and those it finds a value for, in turn ("the director of Ana Ruiz's second film": her films
    find the film the credits are read of; the credits, holding people, do not find her)."""
    chain = {goal}
    while goal in found and found[goal] not in chain:
        goal = found[goal]
        chain.add(goal)
    return chain


def holders(pack: Pack, argument: str, kinds: list[str]) -> dict[str, str]:
    """Goal -> the other resource it reads, for each read among `kinds`' producers whose one required
    argument identifies a resource other than the argument's, and whose answer holds the argument's id."""
    wanted = identified(argument)
    found = {}
    for name, api in pack.spec.apis.items():
        if api.produces not in kinds or api.effects or api.rest is None or api.rest.action not in ("read", "list"):
            continue
        required = [a for a in api.arguments if a not in api.optional]
        if len(required) != 1 or identified(required[0]) in ("", wanted):
            continue
        try:
            found[pack.goal_of_api(name)] = identified(required[0])
        except KeyError:
            continue
    return found


def _through_the_named(pack: Pack, argument: str, kinds: list[str], words: str, chain: set[str]) -> str | None:
    """The read, among `holders`, of the one resource the words name (not one of the `chain` that led
    here): by its noun, else, a resource of people (`person_nouns`), by a person's name ("the films of Ana
    Ruiz")."""
    candidates = {goal: resource for goal, resource in holders(pack, argument, kinds).items() if resource not in chain}
    said = resources_named(set(candidates.values()), words)
    named = {goal: resource for goal, resource in candidates.items() if resource in said}
    if not named and names_a_person(words):
        named = {goal: resource for goal, resource in candidates.items() if resource in PERSON_NOUNS}
    return preferred(pack, argument, named)


def _through_the_only(pack: Pack, argument: str, kinds: list[str], chain: set[str]) -> str | None:
    """With no search for the argument's resource: the read, among `holders`, of the one resource they
    all read (not one of the `chain` that led here)."""
    return preferred(pack, argument, {goal: resource for goal, resource in holders(pack, argument, kinds).items()
                                       if resource not in chain})


def _the_speakers_list(pack: Pack, resource: str, kinds: list[str], words: str) -> str | None:
    """Words that say the thing is the speaker's own ("my first playlist"): the list of the resource that
    needs no value and has no picks where another list of it needs the identifier of the one there is now
    (`/me/playlists` beside `/users/{user_id}/playlists`): the current one's. None where the words do not
    say so."""
    if not says_its_own(words):
        return None
    current = current_ones(pack)
    lists = {name: [a for a in api.arguments if a not in api.optional] for name, api in pack.spec.apis.items()
             if api.rest is not None and not api.effects and (api.rest.action, api.rest.resource) == ("list", resource)}
    theirs = any(len(required) == 1 and identified(required[0]) in current for required in lists.values())
    own = [name for name, required in lists.items() if not required and not pack.spec.apis[name].rest.picks
           and pack.spec.apis[name].produces in kinds]  # not a pick of all of them (`/boards/featured`)
    if not theirs or len(own) != 1:
        return None
    try:
        return pack.goal_of_api(own[0])
    except KeyError:
        return None


def current_ones(pack: Pack) -> dict[str, str]:
    """Resource -> the API of the one call that needs no value and answers the one of it there is now,
    its path naming no resource (`rest.one`, a read: `/me`, the current user); a resource with two such
    calls has none. A pick of a list (`/movie/latest`) is not one: it is named by its picks."""
    found: dict[str, list[str]] = {}
    for name, api in pack.spec.apis.items():
        if api.rest is not None and api.rest.one and api.rest.action == "read" and not api.effects \
                and all(a in api.optional for a in api.arguments):
            found.setdefault(api.rest.resource, []).append(name)
    return {resource: names[0] for resource, names in found.items() if len(names) == 1}


def _the_one_there(pack: Pack, resource: str, kinds: list[str]) -> str | None:
    """The goal of the current one of the resource (`current_ones`: "the current user" of `/me`), when it
    is among `kinds`' producers; None else."""
    api = current_ones(pack).get(resource)
    if api is None or pack.spec.apis[api].produces not in kinds:
        return None
    try:
        return pack.goal_of_api(api)
    except KeyError:
        return None


def preferred(pack: Pack, argument: str, reads: dict[str, str]) -> str | None:
    """Of reads of one resource, one whose answer is the list of the argument's things (its output) before
    one where they are a detail inside (`http.outputs`); None for reads of several resources."""
    if len(set(reads.values())) != 1:
        return None

    def inside(goal: str) -> bool:
        http = pack.spec.apis[pack.spec.goals[goal].api].http
        return http is None or argument in http.outputs
    return min(reads, key=inside)


def _related_said(pack: Pack, argument: str, kinds: list[str], words: str) -> str | None:
    """The read of the things related to one of the argument's own resource (`/albums/{album_id}/similar`,
    answering albums) whose path words after the identifier the words say ("the first album similar to Blue
    Train"): the thing is one of those, and the one they are related to is looked up in turn. None unless one
    is said."""
    wanted, said = identified(argument), stems(words)
    found = []
    for name, api in pack.spec.apis.items():
        required = [a for a in api.arguments if a not in api.optional]
        if api.produces not in kinds or api.effects or api.http is None or len(required) != 1 \
                or identified(required[0]) != wanted or api.rest is None or api.rest.resource != wanted:
            continue  # things of another resource under it (`/users/{user_id}/playlists`) are no such relatives
        tail = {_stem(w) for w in words_after_the_identifier(api.http.path)}
        if tail and tail <= said:
            try:
                found.append(pack.goal_of_api(name))
            except KeyError:
                continue
    return found[0] if len(found) == 1 else None


def _list_said(pack: Pack, kinds: list[str], words: str) -> str | None:
    """The goal of the list, among those whose output is of `kinds` and that need no value but one of a
    closed set (which of its things: `/trending/{media_type}/{time_window}`), whose picks the words say
    most of."""
    if not words:
        return None
    best, said = None, 0
    for name, api in pack.spec.apis.items():
        if api.produces not in kinds or any(a not in api.optional and not pack.value_spec(a).values
                                            for a in api.arguments):
            continue
        n = picks_said(api.rest, words)
        if n > said:
            try:
                best, said = pack.goal_of_api(name), n
            except KeyError:
                continue
    return best


def _search_of(pack: Pack, kind: str, resource: str, argument: str) -> str | None:
    """The goal of the search API of `resource` whose output is `kind`, when it needs only words (no
    identifier; optional words it finds by count as needed); a search of another resource whose items hold
    one is no search for it, a search across kinds whose answer holds the resource's own page of them
    (`tracks.items[].id`) is."""
    for name, api in pack.spec.apis.items():
        if api.produces != kind or api.rest is None or api.rest.action != "search":
            continue
        across = api.http is not None and paged_resource(api.http.outputs.get(argument, "")) == resource
        if not (api.rest.finds and api.rest.resource == resource or across):
            continue
        # what it needs, else the words it finds by where they are optional (`GET /products?query=`)
        needs = [a for a in api.arguments if a not in api.optional] or \
            [a for a in api.arguments if reader(pack.spec.arguments[a].normalizer).searches]
        if needs and all(not pack.spec.arguments[a].accepts_output for a in needs):
            try:
                return pack.goal_of_api(name)
            except KeyError:
                return None
    return None
