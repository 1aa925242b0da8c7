"""What an imported operation does, and to what: its REST action and its resource.

A spec's resources are its nouns in paths: a segment followed by a parameter (`/movie/{movie_id}` ->
movie), or the segment a search names (`/search/person` -> person), across the whole spec. An operation's
resource is the last such noun of its path (`/movie/top_rated` -> movie); its action comes from its method,
then from where its path ends and the word its operationId or summary begins with (lexicon
`operation_words`):

- DELETE deletes, PUT and PATCH update;
- GET searches when a search word names it, reads one thing when its path ends at a parameter or at a part
  of one thing (`/movie/{movie_id}/credits`), else searches when it takes free words to find by (a query
  parameter `q`, `query`, `search`...: `searched_by_words`), else lists;
- POST searches, deletes (`.../cancel`) or updates when its word says so, creates when its path ends at a
  resource, else is another action (`/domains/{domain_id}/verify`).

An identifier argument identifies the resource its name says (`person_id` -> person).

>>> from pipeline.packs.openapi_spec import Operation
>>> ops = [Operation(key="a", method="GET", path="/search/movie"), Operation(key="b", method="GET", path="/movie/{movie_id}"),
...        Operation(key="c", method="GET", path="/movie/top_rated"), Operation(key="d", method="POST", path="/owners"),
...        Operation(key="e", method="GET", path="/owners/{ownerId}"), Operation(key="f", method="GET", path="/movie/{movie_id}/credits")]
>>> nouns = resources(ops)
>>> [semantics(op, nouns) for op in ops]
[('search', 'movie'), ('read', 'movie'), ('list', 'movie'), ('create', 'owner'), ('read', 'owner'), ('read', 'movie')]
>>> identified("person_id"), identified("ServiceSid"), identified("query")
('person', 'service', '')

An identifier inside an answer (`Operation.held_ids`: `networks[].id`, `cast[].id`) identifies the resource
its holder's name says (`production_companies` -> company), else the resource whose *portrait* the holder's
fields resemble most: a portrait is the fields a resource is answered with where it is the whole answer (its
read of one, the items of its search). A cast member's fields (name, gender, profile_path, ...) are a
person's; a collection's `parts` are movies. Before the portrait: the items of pages the answer holds under
two resources' names or more, by one key (`shows.items[].id`, `studios.items[].id`: a search across kinds
answering a page of each), are that resource's.

>>> held = Operation(key="h", method="GET", path="/shows/{show_id}", held_ids={
...     "studios[].id": ["id", "name"], "cast[].id": ["id", "name", "birthday", "role"], "ratings[].id": ["id", "stars"],
...     "shows.items[].id": ["id", "name"], "studios.items[].id": ["id", "name"]})
>>> held_resources(held, {"show", "studio", "person"}, {"person": {"id", "name", "birthday", "photo"}})
{'studios[].id': 'studio', 'cast[].id': 'person', 'shows.items[].id': 'show', 'studios.items[].id': 'studio'}

A list's picks are the words of its path after its resource that name no resource and no action: which of
the resource's things it lists (`/movie/top_rated` -> top, rated; `/movie/now_playing` -> now, playing;
`/me/playlists` -> none: a list of all of them; `/event/list` -> none: its word says only that it lists).

>>> picks(ops[2], nouns), picks(Operation(key="g", method="GET", path="/movie/now_playing"), nouns), picks(ops[3], nouns)
(['top', 'rated'], ['now', 'playing'], [])
>>> picks(Operation(key="l", method="GET", path="/event/list"), {"event"})
[]
"""

from __future__ import annotations

import re

from pipeline.language.words import word_list
from pipeline.packs.openapi_spec import Operation
from pipeline.packs.rest import ID_SUFFIX, identified, last_noun, paged_resource, singular, snake_words

__all__ = ["LOOKUPS", "SEARCH_PARAMETERS", "answered", "held_resources", "identified", "picks", "portraits",
           "resources", "searched_by_words", "selects", "semantics", "singular", "the_one", "words_searched"]

LOOKUPS = ("search", "list")  # the actions that find identifiers of their resource


def _segments(path: str) -> list[tuple[str, bool]]:
    """(segment, is a parameter) of a path, without version segments (`v2`, `2010-04-01`) and file suffixes."""
    parts = []
    for segment in path.strip("/").split("/"):
        if not segment or re.fullmatch(r"v\d+(\.\d+)?|\d{4}-\d{2}-\d{2}", segment):
            continue
        param = segment.startswith("{") and segment.endswith("}")
        parts.append((segment.strip("{}") if param else singular(snake_words(segment.split(".")[0])), param))
    return parts


def _first_word(operation: Operation) -> str:
    name = snake_words(operation.operation_id) if operation.operation_id else operation.summary.lower()
    words = re.findall(r"[a-z]+", name)
    if words and words[0] == operation.method.lower() and len(words) > 1 and operation.operation_id:
        words = words[1:]  # `GET_movie-...`, `post_emails`: the method says nothing more
    return words[0] if words else ""


def _choices(operation: Operation) -> dict[str, list[str]]:
    """Path parameter -> its values, for each one of a closed set (`enum`)."""
    return {f.wire: f.enum for f in operation.fields if f.location == "path" and f.enum}


SEARCH_PARAMETERS = word_list("operation_words", "search_parameters")


def _named_as_searched(field) -> bool:
    return field.location == "query" and field.wire.lower() in SEARCH_PARAMETERS and not field.enum \
        and field.kind == "string"


def searched_by_words(operation: Operation) -> bool:
    """Whether a list takes free words to find its things by: a query parameter named as a search's
    (`operation_words` search_parameters: `q`, `query`, `search`...) that is free text, not a closed set.
    Such a list is the resource's search (`GET /products?query=`, `GET /customers?q=`)."""
    return any(_named_as_searched(f) for f in operation.fields)


def words_searched(field, operation: Operation) -> bool:
    """Whether a search's parameter is the words it looks for: one named as such, else, where it has none,
    a required query parameter (not a filter such as a region or a sort order)."""
    return _named_as_searched(field) or field.location == "query" and field.required and not searched_by_words(operation)


def resources(operations: list[Operation]) -> set[str]:
    """The spec's nouns (the module docstring's rule); a segment before a parameter of a closed set of
    values (`/trending/{media_type}`) names no thing with identifiers."""
    found = set()
    search = word_list("operation_words", "search")
    for operation in operations:
        parts = _segments(operation.path)
        choices = _choices(operation)
        for (segment, param), (after, next_param) in zip(parts, parts[1:]):
            if not param and next_param and after not in choices:
                found.add(segment)
        for (segment, param), (after, after_param) in zip(parts, parts[1:]):
            if segment in search and not after_param:
                found.add(after)
    return found


def selects(operation: Operation, nouns: set[str]) -> tuple[str, dict[str, str]]:
    """A GET whose path ends in parameters of closed sets, one of them of values that name two or more of
    the spec's resources (`/trending/{media_type}/{time_window}`, media_type movie, tv or person): a list of
    whichever resource that parameter is given. (its path parameter, value -> resource); ('', {}) for any
    other operation.

    >>> from pipeline.packs.openapi_spec import RequestField
    >>> op = Operation(key="t", method="GET", path="/top/{kind}/{span}", fields=[
    ...     RequestField(wire="kind", location="path", required=True, enum=["albums", "songs", "all"]),
    ...     RequestField(wire="span", location="path", required=True, enum=["day", "week"])])
    >>> selects(op, {"album", "song", "label"})
    ('kind', {'albums': 'album', 'songs': 'song'})
    """
    parts = _segments(operation.path)
    choices = _choices(operation)
    if operation.method != "GET" or not parts or not parts[-1][1]:
        return "", {}
    params = [segment for segment, param in parts if param]
    if any(segment not in choices for segment in params):
        return "", {}  # an identifier in the path: the things of one other thing, not a list of all
    for wire in params:
        named = {v: singular(snake_words(v)) for v in choices[wire] if singular(snake_words(v)) in nouns}
        if len(named) >= 2:
            return wire, named
    return "", {}


def semantics(operation: Operation, nouns: set[str]) -> tuple[str, str]:
    """(action, resource) of an operation (the module docstring's rules); a list of the resource a
    parameter selects (`selects`) lists none of its own."""
    if selects(operation, nouns)[1]:
        return "list", ""
    parts = _segments(operation.path)
    literal = [s for s, param in parts if not param]
    words = word_list("operation_words", "search")
    named = [s for s in literal if s in nouns]
    resource = named[-1] if named else (literal[-1] if literal else "")
    first = _first_word(operation)
    searched = first in words or any(s in words for s in literal)
    if searched and literal and literal[-1] in words and len(literal) > 1:  # `/boards/search`
        resource = named[-1] if named else literal[-2]
    if resource in words and (things := [s for s in literal if s not in words]):
        resource = things[-1]  # `/speaker/search/{search_string}` searches speakers: "search" is no thing
    ends_at_param = bool(parts) and parts[-1][1]
    last = parts[-1][0] if parts else ""
    method = operation.method
    if method == "DELETE":
        return "delete", resource
    if method in ("PUT", "PATCH"):
        return "update", resource
    if method == "GET":
        if searched:
            return "search", resource
        if ends_at_param or (len(parts) > 1 and parts[-2][1] and last not in nouns):
            return "read", resource
        return ("search" if searched_by_words(operation) else "list"), resource
    if searched:
        return "search", resource
    if first in word_list("operation_words", "delete") or last in word_list("operation_words", "delete"):
        return "delete", resource
    if first in word_list("operation_words", "update") or ends_at_param:
        return "update", resource
    if not ends_at_param and last in nouns or first in word_list("operation_words", "create"):
        return "create", resource
    return "action", resource


def portraits(operations: list[Operation], nouns: set[str]) -> dict[str, set[str]]:
    """Resource -> the fields it is answered with where it is the whole answer: a GET ending at its
    identifier (`/movie/{movie_id}`), and the items a search of it finds."""
    found: dict[str, set[str]] = {}
    for operation in operations:
        if operation.method != "GET":
            continue
        action, resource = semantics(operation, nouns)
        parts = _segments(operation.path)
        if action == "read" and resource and len(parts) > 1 and parts[-1][1] and parts[-2] == (resource, False):
            found.setdefault(resource, set()).update(operation.answer_fields)
        elif action == "search" and resource:
            for path, fields in operation.held_ids.items():
                if re.fullmatch(r"[^.\[\]]+\[\]\.[^.\[\]]+", path):
                    found.setdefault(resource, set()).update(fields)  # the items of a top-level list
            if operation.answers_list:
                found.setdefault(resource, set()).update(operation.answer_fields)
    return found


PORTRAIT_SHARE = 0.5  # of a holder's fields (its ids aside) a portrait must have, at least PORTRAIT_FIELDS of them
PORTRAIT_FIELDS = 2


def held_resources(operation: Operation, nouns: set[str], portrait: dict[str, set[str]]) -> dict[str, str]:
    """Path of an identifier inside the answer -> the resource it identifies (the module docstring's rule);
    an identifier neither rule types is left out."""
    # a key that holds the items of pages of two resources or more (`albums.items[]`, `artists.items[]`)
    parents: dict[str, set[str]] = {}
    for path in operation.held_ids:
        if paged_resource(path) in nouns:
            parents.setdefault(path.split(".")[-2], set()).add(paged_resource(path))
    pages = {key for key, resources in parents.items() if len(resources) > 1}
    typed = {}
    for path, fields in operation.held_ids.items():
        keys = path.split(".")
        named = last_noun(snake_words(keys[-2].removesuffix("[]"))) if len(keys) >= 2 else ""
        if named in nouns:
            typed[path] = named
            continue
        if len(keys) >= 3 and keys[-2] in pages:
            typed[path] = paged_resource(path)
            continue
        if resembled := _resembled(fields, portrait):
            typed[path] = resembled
    return typed


def _resembled(fields: list[str] | set[str], portrait: dict[str, set[str]]) -> str:
    """The resource whose portrait has most of these fields (ids aside), and enough of them; '' for none
    or a tie."""
    own = {f for f in fields if not ID_SUFFIX.search(snake_words(f))}
    scores = sorted(((len(own & p), r) for r, p in portrait.items()), reverse=True)
    if own and scores and scores[0][0] >= max(PORTRAIT_FIELDS, PORTRAIT_SHARE * len(own)) \
            and (len(scores) == 1 or scores[1][0] < scores[0][0]):
        return scores[0][1]
    return ""


def the_one(operation: Operation, nouns: set[str], portrait: dict[str, set[str]]) -> str:
    """The resource of a GET that needs no value and answers one thing with its identifier (`/me`,
    `/movie/latest`): the one there is now. The path's noun says which, else a noun in the name of the
    answer's schema (`PrivateUser` -> user), else the portrait the answer resembles; '' for any other
    operation.

    >>> me = Operation(key="me", method="GET", path="/me", outputs=["id", "name"], answer_fields=["id", "name", "email"])
    >>> the_one(me, {"user", "song"}, {"user": {"name", "email"}, "song": {"title", "length"}})
    'user'
    """
    if operation.method != "GET" or operation.answers_list or any(f.required for f in operation.fields) \
            or not operation.outputs or not ID_SUFFIX.search(snake_words(operation.outputs[0])):
        return ""
    resource = semantics(operation, nouns)[1]
    return resource if resource in nouns else answered(operation, nouns, portrait)


def answered(operation: Operation, nouns: set[str], portrait: dict[str, set[str]]) -> str:
    """The resource an answer is (of its items, for a list): a noun in the name of its schema
    (`PrivateUser` -> user), else the portrait its fields resemble; '' for none.

    >>> played = Operation(key="p", method="GET", path="/me/player/recently-played", entity="PlayHistoryTrack",
    ...                    answers_list=True)
    >>> answered(played, {"track", "album"}, {})
    'track'
    """
    named = [singular(w) for w in snake_words(operation.entity).split("_") if singular(w) in nouns]
    return named[-1] if named else _resembled(operation.answer_fields, portrait)


def picks(operation: Operation, nouns: set[str]) -> list[str]:
    """A list's picks (the module docstring's rule): the words of the literal segments after its resource's
    last mention (with none in its path, of its last part), none of them a resource or an action's word."""
    parts = _segments(operation.path)
    last_noun = max((i for i, (s, param) in enumerate(parts) if not param and s in nouns), default=-1)
    if last_noun < 0:  # no resource in the path (`/me/player/recently-played`): its last word part says which
        last_noun = max((i for i, (_, param) in enumerate(parts) if not param), default=0) - 1
    actions = set().union(*(word_list("operation_words", a) for a in ("search", "create", "update", "delete", "list",
                                                                       "read")))  # `/event/list` lists them all
    words = [w for s, param in parts[last_noun + 1:] if not param for w in s.split("_")]
    return [] if any(w in nouns or w in actions for w in words) else words
