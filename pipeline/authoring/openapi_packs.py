"""An OpenAPI (or Swagger 2.0) spec as a call pack: `nesyplan import-openapi SPEC`.

Every operation the document describes becomes one goal and one API; its summary and description are what
the translator reads. What it takes becomes arguments, named by these rules:

- an API is its operationId in snake case (`getPetById` -> `get_pet_by_id`); an operation without one is
  its method and path (`POST /emails/{email_id}/cancel` -> `post_emails_email_id_cancel`);
- an argument is its parameter's or property's name in snake case; a property of a nested object joins its
  path with `_` (`category.name` -> `category_name`); a body's own identifier is named after its schema (the
  `id` of an `Order` -> `order_id`, as a path parameter would name it), and so is a path's bare `id` after
  the resource's word (`/tracks/{id}` -> `track_id`), a field named only `ids`, `uri` or `uris` after the
  resource it identifies (`_listed_owner`: `PUT /me/albums?ids=` -> `album_ids`); a body that is one value is named
  after its schema; a header the spec's credentials go in is no argument;
- the pack's arguments are shared by its APIs, so one name must mean one thing: a property of a named
  schema whose name other schemas or parameters use too is qualified by its schema (a `Booking`'s `name` ->
  `booking_name`, apart from the `name` a search takes), identifiers excepted (`petId` is one pet id
  wherever it appears); when operations give one name different types or value lists, the most common
  keeps the name and the others are qualified by their schema, else the operation's first tag, else the
  API (`status` of an Order -> `order_status`).

Required path, query, header and body fields are asked for when the request leaves them out; optional ones
carry the spec's default or are left out of the request. Types come from JSON Schema: an `enum` is a
`choice`, a boolean a true/false choice, `integer` an integer, `number` an amount, `format: date` a date,
`email` an email, a free-text query parameter of a search `search_text` (words as written, in
lower case too), a web address by its format (`uri`, `url`), its name (`photoUrls`) or the example the
document shows (`url`: read whole), a string whose `pattern` takes digits alone `digits` (sent as its
digits), a field its description says takes E.164 a phone number with its country code
(`e164`: "+447700900123"); other strings by the same name-and-description rules as SGD slots (a phone, a
time, a person's name). A method other than GET changes something (`effects`: read back before it runs).

An API's output is the first identifier of its answer (else its first field). An argument takes another
API's output when its name is that output's name (`ticket_id` <- the `ticketId` a purchase returns), or that
output's name after a word of the name of the schema the API answers with (`pet_id` <- the `id` of the
`Pet` that `addPet` returns; `car_id` <- the `id` of a `CarCreated`; `service_sid` <- the `sid` of a
`verify.v2.service`). Only identifiers flow: a date or a name is the user's to give.

Hand additions live in `domains/<pack>/overlay.yaml` and survive a re-import: what an SGD overlay holds
(goal `examples` and `description`, `out_of_scope`, argument `description`, `question`, `normalizer`,
`values`, `synonyms`, `examples`) and `leave_out`, operations (by operationId, API name or `METHOD /path`)
not to import.
"""

from __future__ import annotations

import re
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from pipeline.authoring.rest_semantics import (LOOKUPS, answered, held_resources, identified, picks, portraits, resources,
                                               selects, semantics, singular, the_one, words_searched)
from pipeline.authoring.sgd_packs import BOOLEAN_SYNONYMS, RESERVED, Overlay, apply_overlay, infer_normalizer, load_overlay
from pipeline.authoring.writer import GENERIC_ERRORS, PackNotValid, pack_paths, typed_call_pack_files, write_validated_pack
from pipeline.language.words import word_lists
from pipeline.packs.openapi_spec import ID_FIELD, ApiDocument, OpenApiError, Operation, RequestField, join_base_url, load_document
from pipeline.packs.pack import BOOLEAN_VALUES, NAME
from pipeline.packs.rest import LISTED, path_identifiers
from pipeline.packs.sgd_schema import SgdSchemaError, SgdSlot, closest_hint
from pipeline.values.normalizers import web_address

GENERATOR = "import-openapi"
JSON_TYPES = {"integer", "number", "boolean", "array"}  # sent as themselves in a JSON body, not as strings
BARE_IDS = {"ids", "uri", "uris"}  # names that say a field takes identifiers but not of what
URI = re.compile(r"(?:^|_)uris?$")  # an argument that takes URIs: a found thing's `uri`, not its id
# A string field is an email address when its name ends in "email" or its description says "email address"
# (the six shared specs: 10 such fields, all addresses; 6 others only mention email: a subject, a channel).
EMAIL_FIELD = re.compile(r"\be-?mail address", re.IGNORECASE)
# A field named for a currency takes one of their codes, named by the code or the currency's words.
_CURRENCIES = {"values": [code.upper() for code in sorted(word_lists("currencies"))],
               "synonyms": {code.upper(): sorted(words) for code, words in sorted(word_lists("currencies").items())
                            if words}}
PERIODS = word_lists("period_values")  # an enum value that is a period ("day") is named by these words too ("today")
E164 = re.compile(r"\bE\.?164\b", re.IGNORECASE)  # a field documented as taking phone numbers the E.164 way ("+14155550142")


class OpenApiOverlay(Overlay):
    """An SGD overlay's additions, and operations not to import."""
    leave_out: list[str] = []


def snake(text: str) -> str:
    """`getPetById` -> get_pet_by_id; `X-Request-ID` -> x_request_id; `verify.v2.service` -> verify_v2_service.

    >>> snake("getPetById"), snake("POST /emails/{email_id}/cancel"), snake("HTTPStatus")
    ('get_pet_by_id', 'post_emails_email_id_cancel', 'http_status')
    """
    text = re.sub(r"(?<=[A-Z])(?=[A-Z][a-z])|(?<=[a-z0-9])(?=[A-Z])", "_", text)
    text = re.sub(r"[^A-Za-z0-9]+", "_", text).strip("_").lower()
    return text if re.match(r"[a-z]", text) else f"x_{text}" if text else ""


def api_names(document: ApiDocument) -> dict[str, str]:
    """operation key -> API name, unique, valid and clear of the generated files' own names."""
    names: dict[str, str] = {}
    for operation in document.operations:
        base = snake(operation.operation_id or f"{operation.method} {operation.path}") or "operation"
        generated = f"_{snake(operation.path)}_{operation.method.lower()}"
        if operation.operation_id and base.endswith(generated) and len(base) > len(generated):
            base = base[: -len(generated)]  # FastAPI's own `<function>_<path>_<method>`: the function
        if base in RESERVED:
            base = f"{base}_api"
        name, n = base, 2
        while name in names.values():
            name, n = f"{base}_{n}", n + 1
        names[operation.key] = name
    return names


def _argument_base(field: RequestField, operation: Operation, nouns: set[str]) -> str:
    if field.wire == "":
        return _owner_word(field.owner) or "request_body"
    name = snake(field.wire.replace(".", "_"))
    path = operation.path
    if field.location == "path" and name == "id" and (resource := path_identifiers(path).get(field.wire)):
        return f"{resource}_id"  # `/tracks/{id}`: a track's id, not one `id` shared by every resource's paths
    if name in BARE_IDS and (owner := _listed_owner(field, operation, nouns)):
        return f"{owner}_{name}"  # `PUT /me/albums?ids=`: album ids, apart from the track ids of `/me/tracks`
    if field.location in ("body", "form") and ID_FIELD.fullmatch(name) and field.owner:
        name = f"{_owner_word(field.owner)}_{name}"  # an Order's `id` is an order_id, as a path would name it
    return f"{name}_value" if name in RESERVED else name


def _listed_owner(field: RequestField, operation: Operation, nouns: set[str]) -> str:
    """The resource a field named only `ids`, `uri` or `uris` identifies: the operation's resource, where
    no parameter of its path identifies it (`POST /playlists/{playlist_id}/tracks?uris=`: tracks), else the
    first of the spec's nouns the field's description names ("artist or user IDs"); '' for none.

    >>> op = Operation(key="f", method="PUT", path="/me/following")
    >>> ids = RequestField(wire="ids", location="query", required=True, description="artist or user IDs")
    >>> _listed_owner(ids, op, {"artist", "user"})
    'artist'
    """
    resource = semantics(operation, nouns)[1]
    if resource in nouns and resource not in path_identifiers(operation.path).values():
        return resource
    return next((w for w in map(singular, re.findall(r"[a-z]+", field.description.lower())) if w in nouns), "")


def _acted_on(field: RequestField, argument: str, operation: Operation, resource: str) -> bool:
    """Whether a field lists the things a call with effects acts on, though the spec leaves it out of the
    required ones (it may take them another way): identifiers of the call's resource, in a list, where no
    parameter of its path identifies one (`POST /playlists/{playlist_id}/tracks?uris=`: the tracks to add).
    Left out, the call does nothing; so the plan finds them or asks."""
    listed = LISTED.search(argument) or field.kind == "array" or "[]" in field.wire
    return operation.method != "GET" and bool(listed) and bool(resource) and identified(argument) == resource \
        and resource not in path_identifiers(operation.path).values()


def _normalizer(field: RequestField, name: str, nouns: set[str] = frozenset()) -> tuple[str, dict]:
    """(normaliser, extra argument keys) of a field (the module docstring's type rules)."""
    if field.enum:
        values = list(dict.fromkeys(field.enum))
        periods = {v: sorted(PERIODS[v.lower()]) for v in values if v.lower() in PERIODS}
        return "choice", {"values": values, **({"synonyms": periods} if periods else {})}
    if field.kind == "boolean":
        # the words SGD's flags are given by ("yes" of True), besides the value itself
        return "choice", {"values": list(BOOLEAN_VALUES), "synonyms": {
            value: [w for w in BOOLEAN_SYNONYMS[value.capitalize()] if w != value] for value in BOOLEAN_VALUES}}
    if field.kind == "string" and name.split("_")[-1] == "currency":
        return "choice", _CURRENCIES  # a code the amount beside it is written with ("89.50 EUR", "45 dollars")
    if (ID_FIELD.search(name) or identified(name) in nouns) and field.kind in ("string", "integer", "array") \
            and field.format not in ("email", "uri", "url"):
        return "identifier", {}  # kept as written: a uuid whole, "#1183" as 1183; a name is no id
    money = field.kind in ("integer", "number") and \
        infer_normalizer(SgdSlot(name=name, description=field.description)) == "amount"
    if field.kind == "integer":  # a price in cents is money still: "2500 EUR" is its value, not "no count"
        return ("amount" if money else "integer"), {}
    if field.kind == "number":  # money rounds to cents; any other number (a latitude, a weight) is kept as written
        return ("amount" if money else "decimal"), {}
    if _web_address(field, name):
        return "url", {}
    if field.kind == "string" and digits_only(field.pattern):
        return "digits", {}  # a phone number or a code its pattern takes as digits alone ("^[0-9]*$")
    if field.kind == "array" and field.format != "date":
        return "title_text", {}
    if field.format == "email":
        return "email", {}
    slot = SgdSlot(name=name, description=field.description)
    if field.format == "date":
        return ("date" if infer_normalizer(slot) == "date" else "future_date"), {}
    if field.format == "date-time":
        return "date_time", {}  # a day and its time, sent in RFC 3339 (`values.moments`)
    if field.format in ("uuid", "uri", "byte", "binary", "password"):
        return "title_text", {}
    if E164.search(field.description or ""):
        return "e164", {}  # the standard the field names: a number with its country code, sent as "+..."
    inferred = infer_normalizer(slot)  # a string's name and words: a day, a time, a phone, a person
    if inferred == "email" and not (EMAIL_FIELD.search(field.description or "") or name.split("_")[-1] == "email"):
        inferred = "title_text"  # an email's subject, a channel named "email": about email, not an address
    return ("title_text" if inferred in ("integer", "amount") else inferred), {}


def digits_only(pattern: str) -> bool:
    """Whether a field's `pattern` takes digits and nothing else (no dash, space, sign or letter).

    >>> digits_only("^[0-9]*$"), digits_only(r"^\\d{10}$"), digits_only("^[A-Z]{2}[0-9]+$"), digits_only("")
    (True, True, False, False)
    """
    try:
        compiled = re.compile(pattern)
    except (re.error, TypeError):
        return False
    return bool(pattern) and any(compiled.search("0123456789"[:n]) for n in (4, 6, 8, 10)) and not any(
        compiled.search(other) for other in ("608-555-0123", "+44 7700", "ab12", "12.5"))


# A field that takes web addresses: by its format, its name's last word, or the example the document gives.
_WEB_FORMATS = {"uri", "url", "iri"}
_WEB_NAME = re.compile(r"(?:^|_)(?:urls?|href)$")


def _web_address(field: RequestField, name: str) -> bool:
    """Whether a string field (or a list of them) is a web address."""
    return field.kind in ("string", "array") and (
        field.format in _WEB_FORMATS or bool(_WEB_NAME.search(name))
        or bool(field.example) and web_address(field.example) == field.example.strip())


# Words schema names wrap a resource in: `SendEmailRequest`, `OwnerFields`, `UpdateDomainOptions`.
_WRAPPERS = word_lists("schema_names")


def _answer_words(operation: Operation) -> list[str]:
    """What an operation's answer holds: its fields but identifiers (a film's credits: `cast`, `crew`; its
    images: `backdrops`, `logos`, `posters`); retrieval reads the first few (`retrievers.DESCRIBED_ANSWERS`),
    a question about one field finds the call that answers it by all of them."""
    return [word for word in map(snake, operation.answer_fields) if not ID_FIELD.search(word)]


def _owner_word(owner: str) -> str:
    """A schema's name as a qualifier: its last dotted part, without the words requests wrap a resource in
    (`verify.v2.verification` -> verification; `SendEmailRequest` -> email; `PetTypeFields` -> pet_type).

    >>> _owner_word("SendEmailRequest"), _owner_word("verify.v2.verification"), _owner_word("Request")
    ('email', 'verification', 'request')
    """
    words = snake(owner.rsplit(".", 1)[-1]).split("_")
    core = list(words)
    while core and core[-1] in _WRAPPERS["tails"]:
        core.pop()
    while core and core[0] in _WRAPPERS["heads"]:
        core.pop(0)
    return "_".join(core or words)


def _qualifier(field: RequestField, operation: Operation, api: str) -> str:
    return _owner_word(field.owner) or (snake(operation.tags[0]) if operation.tags else "") or api


def argument_names(document: ApiDocument, apis: dict[str, str]) -> dict[tuple[str, str, str], str]:
    """(operation key, location, wire) -> argument name, by the module docstring's naming rules."""
    uses: dict[str, list[tuple]] = {}
    owners: dict[str, set[str]] = {}
    nouns = resources(document.operations)
    for operation in document.operations:
        for field in operation.fields:
            base = _argument_base(field, operation, nouns)
            signature = repr(_normalizer(field, base, nouns))
            uses.setdefault(base, []).append((operation, field, signature))
            owners.setdefault(base, set()).add(field.owner)
    names: dict[tuple[str, str, str], str] = {}
    # argument name -> its signature; an API's name, or its output's, is no argument's (one PDDL name space)
    taken: dict[str, str] = {n: "api" for api in apis.values() for n in (api, f"{api}_result")}
    for base, group in uses.items():
        common = Counter(sig for _, _, sig in group).most_common(1)[0][0]
        for operation, field, signature in group:
            own = base
            if field.owner and len(owners[base]) > 1 and not ID_FIELD.search(base):
                own = f"{_owner_word(field.owner)}_{base}"  # a Booking's name is not a Restaurant's
            name = own
            if signature != common or taken.get(own, signature) != signature:
                name = f"{_qualifier(field, operation, apis[operation.key])}_{base}"
                if taken.get(name, signature) != signature:
                    name = f"{apis[operation.key]}_{base}"
                if taken.get(name, signature) != signature:
                    name = f"{name}_input"
            taken[name] = signature
            names[(operation.key, field.location, field.wire)] = name
    return names


def _output_field(operation: Operation) -> str:
    return next((o for o in operation.outputs if ID_FIELD.search(snake(o))), operation.outputs[0] if operation.outputs else "")


def _takes_output(argument: str, producer: Operation) -> bool:
    """Whether an argument of this name takes the producer's output (the module docstring's rule)."""
    output = snake(_output_field(producer))
    if not ID_FIELD.search(output):  # only an identifier flows: a date or a name is the user's to give
        return False
    if argument == output and output != "id":
        return True
    entity = snake(producer.entity)
    if not entity or not argument.endswith("_" + output):
        return False
    owner = argument[: -len(output) - 1]
    words = entity.split("_")
    return owner in words or f"{owner}s" in words or entity.endswith("_" + owner)


def _found_ids(operation: Operation, resource: str, segments: set[str]) -> str:
    """Where a search's or a list's answer holds the ids of its resource: the items of a list answer, a list
    inside the answer named after the resource or named as no part of any path (`results`, `data`; not a
    movie's `genres`), else the answer's own id; '' when it holds none."""
    if operation.answers_list:
        output = _output_field(operation)
        return output if ID_FIELD.search(snake(output)) else ""
    for listed in operation.listed_ids:
        key = singular(listed.split("[]", 1)[0].lower())
        if key == resource or key not in segments:
            return listed
    output = _output_field(operation)
    return output if ID_FIELD.fullmatch(snake(output)) else ""


def _takes_held(producer: dict, argument: str, inside: list[str]) -> bool:
    """Whether the argument takes one of the identifiers `inside` the producer's answer (`held_resources`):
    the one its answer's own list finds (`finds`) first, else the shallowest; the binding's `outputs` gets
    its path where that is not the call's output. An argument the producer needs is fed only from a list of
    other things inside the answer (`/movie/{movie_id}/similar` holds other movies' ids), never from the
    answer's own id."""
    found = producer["rest"].get("finds", "")
    needed = argument in producer["arguments"] and argument not in producer.get("optional", {})
    paths = [p for p in inside if "[]" in p] if needed else inside
    if not paths:
        return False
    best = found if found in paths else min(paths, key=lambda p: (p.count("."), inside.index(p)))
    if best != producer["http"].get("output"):
        producer["http"].setdefault("outputs", {})[argument] = best
    return True


def _description(operation: Operation) -> str:
    summary = operation.summary.strip().rstrip(".")
    detail = re.split(r"(?<=[.!?])\s|\n", operation.description.strip(), maxsplit=1)[0].strip().rstrip(".")
    words = [part for part in (summary, detail) if part]
    if len(words) == 2 and detail.lower().startswith(summary.lower()):
        words = [detail]
    text = ". ".join(dict.fromkeys(words)) or f"{operation.method} {operation.path}"
    return re.sub(r"\s+", " ", text)[:300]


def pack_spec(document: ApiDocument, name: str, base_url: str = "", overlay: OpenApiOverlay | None = None,
              overlay_path: Path | None = None) -> dict:
    """pack.yaml of a document, as a dict (deterministic: the document's own order throughout)."""
    apis_of = api_names(document)
    document = _without_left_out(document, apis_of, overlay, overlay_path)
    reading = _DocumentReading.of(document, apis_of)
    goals, apis, arguments = {}, {}, {}
    for operation in document.operations:
        api = apis_of[operation.key]
        apis[api] = _api_entry(operation, reading, arguments)
        goals[api] = {"api": api, "description": apis[api]["description"], "examples": []}
    _link_outputs(document, reading, apis, arguments)
    description = " ".join(part for part in (document.title.strip().rstrip(".") + ".",
                                             re.split(r"\n\n", document.description.strip())[0]) if part.strip(". "))
    spec = {"name": name, "description": re.sub(r"\s+", " ", description)[:500], "out_of_scope": [], "goals": goals,
            "apis": apis, "arguments": arguments, "errors": dict(GENERIC_ERRORS)}
    url = join_base_url(base_url, document.base_url)
    if url:
        spec["http_base_url"] = url
    if document.auth:
        spec["http_auth"] = _http_auth(document.auth, f"NESYPLAN_{name.upper()}")
    if document.auths:  # each other scheme's secret in a variable named after it too
        spec["http_auths"] = {scheme: _http_auth(auth, f"NESYPLAN_{name.upper()}_{snake(scheme).upper()}")
                              for scheme, auth in document.auths.items()}
    if overlay is not None:
        try:
            apply_overlay(spec, overlay, overlay_path or Path("overlay.yaml"))
        except SgdSchemaError as exc:
            raise OpenApiError(str(exc)) from None
    return spec


def _without_left_out(document: ApiDocument, apis_of: dict[str, str], overlay: OpenApiOverlay | None,
                      overlay_path: Path | None) -> ApiDocument:
    """The document without the operations the overlay leaves out (by key, API name or "METHOD path"); an
    item that names no operation is an error that says the closest."""
    if not (overlay and overlay.leave_out):
        return document
    known = {key for op in document.operations for key in (op.key, apis_of[op.key], f"{op.method} {op.path}")}
    for item in overlay.leave_out:
        if item not in known:
            raise OpenApiError(f"{overlay_path}: leave_out: no operation {item!r}{closest_hint(item, sorted(known))}")
    gone = set(overlay.leave_out)
    return document.model_copy(update={"operations": [
        op for op in document.operations if not {op.key, apis_of[op.key], f"{op.method} {op.path}"} & gone]})


@dataclass
class _DocumentReading:
    """What the whole document says that each operation's entry is read against: the API and argument
    names, the resources (`nouns`), the words of its paths, what each operation's answer is of (`portrait`)
    and where a lookup's answer holds each resource's identifiers (`held_of`: its list's resource, then the
    dataflow)."""
    apis_of: dict[str, str]
    names: dict[tuple[str, str, str], str]
    nouns: set[str]
    segments: set[str]
    portrait: dict
    held_of: dict[str, dict[str, str]]

    @classmethod
    def of(cls, document: ApiDocument, apis_of: dict[str, str]) -> _DocumentReading:
        nouns = resources(document.operations)
        portrait = portraits(document.operations, nouns)
        return cls(apis_of, argument_names(document, apis_of), nouns,
                   {singular(part.lower()) for op in document.operations for part in re.split(r"[/_.-]+", op.path)},
                   portrait, {op.key: held_resources(op, nouns, portrait) for op in document.operations
                              if op.method == "GET"})


def _api_entry(operation: Operation, reading: _DocumentReading, arguments: dict) -> dict:
    """An operation's `apis` entry: its arguments (each new one added to `arguments`), its REST semantics
    and its HTTP binding."""
    names, nouns, portrait = reading.names, reading.nouns, reading.portrait
    api = reading.apis_of[operation.key]
    action, resource = semantics(operation, nouns)
    one = the_one(operation, nouns, portrait)
    if one and one != resource:  # `/me` answers one user: a read of the current one, which finds its id
        action, resource = "read", one
    elif action == "list" and resource and resource not in nouns:  # `/me/player/recently-played`: tracks
        items = reading.held_of[operation.key].get(_found_ids(operation, resource, reading.segments), "")  # a GET
        resource = answered(operation, nouns, portrait) or items or resource
    selector, selected = selects(operation, nouns)
    binding: dict = {"method": operation.method,
                     "path": re.sub(r"{([^}]+)}", lambda m: "{" + names.get((operation.key, "path", m[1]), snake(m[1])) + "}",
                                    operation.path)}
    takes, optional = _bound_fields(operation, reading, action, resource, binding, arguments)
    if operation.encoding != "json" and binding.get("body"):
        binding["form"] = True
        if operation.encoding == "multipart":
            binding["multipart"] = True
    binding["output"] = _output_field(operation)
    if operation.auth:
        binding["auth"] = operation.auth
    found = _found_ids(operation, resource, reading.segments) if action in LOOKUPS or one else ""
    if found:
        binding["output"] = found
    return {"arguments": takes, "produces": f"{api}_result", "description": _description(operation),
            **({"optional": optional} if optional else {}),
            **({"operation": operation.key} if operation.key != api else {}),
            **({"effects": True} if operation.method != "GET" else {}),
            **({"returns": [snake(o) for o in operation.outputs]} if operation.outputs else {}),
            "rest": {"action": action, "resource": resource, **({"finds": found} if found else {}),
                     **({"selector": names[(operation.key, "path", selector)], "selects": selected}
                        if found and selected else {}),
                     **({"picks": chosen} if action == "list" and found and (chosen := picks(operation, nouns))
                        else {}),
                     **({"one": True} if one and found else {}),
                     **({"answers": held} if (held := _answer_words(operation)) else {})},
            "http": binding}


def _bound_fields(operation: Operation, reading: _DocumentReading, action: str, resource: str, binding: dict,
                  arguments: dict) -> tuple[list[str], dict]:
    """The arguments an operation takes and the optional ones with their defaults; each field is bound
    where it goes on the wire (`binding`), and a new argument gets its normaliser (in `arguments`)."""
    takes, optional = [], {}
    for field in operation.fields:
        argument = reading.names[(operation.key, field.location, field.wire)]
        where = {"query": "query", "header": "headers", "body": "body", "form": "body"}.get(field.location)
        if where:  # one value may go in two places (a pet type's id in its path and in its body)
            binding.setdefault(where, {})[field.wire] = argument
        if field.location == "body" and field.kind in JSON_TYPES:
            binding.setdefault("types", {})[argument] = field.kind
        if argument in takes:
            continue
        takes.append(argument)
        if not field.required and not _acted_on(field, argument, operation, resource):
            optional[argument] = field.default
        normalizer, extra = _normalizer(field, _argument_base(field, operation, reading.nouns), reading.nouns)
        if normalizer == "title_text" and action == "search" and words_searched(field, operation):
            normalizer = "search_text"  # what a search looks for, in lower case too
        if normalizer == "digits" and field.location in ("body", "form", "query"):  # as its pattern takes it
            binding.setdefault("types", {})[argument] = "digits"
        if normalizer in ("date", "future_date"):  # read as a day, sent as ISO 8601 (`format: date`)
            binding.setdefault("types", {})[argument] = "dates" if field.kind == "array" else "date"
        arguments.setdefault(argument, {"description": field.description.strip()[:300]
                                         or argument.replace("_", " "), "normalizer": normalizer, **extra})
    return takes, optional


def _link_outputs(document: ApiDocument, reading: _DocumentReading, apis: dict, arguments: dict) -> None:
    """Dataflow: each argument accepts the results of the operations whose answers hold its values (ids
    inside arrays and nested objects, a `uri` beside the id), or that find or make the thing it identifies."""
    for operation in document.operations:
        producer = apis[reading.apis_of[operation.key]]
        held = reading.held_of.get(operation.key, {})  # lookups read
        for argument, spec in arguments.items():
            kind = f"{reading.apis_of[operation.key]}_result"
            inside = [path for path, resource in held.items() if resource == identified(argument)]
            if URI.search(argument):  # a URI is its holder's `uri` beside the id, where it has one
                inside = [re.sub(r"[^.]+$", "uri", path) for path in inside if "uri" in operation.held_ids[path]]
            if inside and _takes_held(producer, argument, inside):
                spec.setdefault("accepts_output", []).append(kind)
                continue
            if argument in producer["arguments"] and argument not in producer.get("optional", {}) \
                    or URI.search(argument):
                continue  # it needs that value itself: it gives back the one it was given; an id is no URI
            finds = producer["rest"].get("finds") and identified(argument) and (
                identified(argument) == producer["rest"]["resource"] or
                identified(argument) in producer["rest"].get("selects", {}).values())
            if _takes_output(argument, operation) or finds:
                spec.setdefault("accepts_output", []).append(kind)


def _http_auth(auth, prefix: str) -> dict:
    """A pack's credentials entry; its secret is read from `<prefix>_TOKEN` (`_CREDENTIALS`: user:password)."""
    return {"scheme": auth.scheme, **({"name": auth.name} if auth.name else {}),
            "env": f"{prefix}_{'CREDENTIALS' if auth.scheme == 'basic' else 'TOKEN'}"}


def operations_of(pack: dict, document: ApiDocument) -> dict[str, str]:
    """API name -> `METHOD /path` as the spec writes it (how RestBench names a call)."""
    names = api_names(document)
    return {names[op.key]: f"{op.method} {op.path}" for op in document.operations if names[op.key] in pack["apis"]}


def dataflow_edges(spec: dict) -> list[tuple[str, str, str]]:
    """(producer API, consumer API, argument) for each output an API's argument can take."""
    edges = []
    for consumer, api in spec["apis"].items():
        for argument in api["arguments"]:
            for kind in spec["arguments"][argument].get("accepts_output", []):
                producer = kind.removesuffix("_result")
                if producer != consumer:
                    edges.append((producer, consumer, argument))
    return edges


def default_pack_name(source: Path, document: ApiDocument) -> str:
    """The file's name (`petstore.yaml` -> petstore), or the spec's title's first three words when the file
    has a name every spec could have (`openapi.json`)."""
    stem = snake(source.stem.split(".")[0])
    if stem and stem not in ("openapi", "swagger", "api", "spec", "schema", "api_docs"):
        return stem
    return "_".join(snake(document.title).split("_")[:3]) or "api"


def import_openapi(source: Path, out: Path, name: str | None = None, base_url: str = "",
                   operations: list[str] | None = None) -> tuple[Path, dict, ApiDocument, float]:
    """Write one validated pack for a spec under the packs root `out`: (pack.yaml, its spec, the document
    read, seconds taken). Nothing is written when the spec or the pack it makes is refused."""
    started = time.perf_counter()
    document = load_document(source)
    name = name or default_pack_name(Path(source), document)
    if not NAME.fullmatch(name or ""):
        raise OpenApiError(f"{source}: {name!r} is no pack name (lower case letters, digits and _; give --name)")
    if operations:
        apis_of = api_names(document)
        keys = {key: op for op in document.operations for key in (op.key, apis_of[op.key])}
        unknown = [o for o in operations if o not in keys]
        if unknown:
            raise OpenApiError(f"{source}: no operation {unknown[0]!r}{closest_hint(unknown[0], sorted(keys))}")
        chosen = {keys[o].key for o in operations}
        document = document.model_copy(update={"operations": [op for op in document.operations if op.key in chosen]})
    overlay_path = pack_paths(out, name)["yaml"].with_name("overlay.yaml")
    spec = pack_spec(document, name, base_url, _read_overlay(overlay_path), overlay_path)
    rules, pddl = typed_call_pack_files(spec, GENERATOR)
    header = (f"{name}: generated by `nesyplan {GENERATOR}` from {Path(source).name} ({document.title or 'untitled'}, "
              f"OpenAPI {document.version}); edit overlay.yaml beside it, not this file.")
    try:
        path = write_validated_pack(out, spec, rules, pddl, header=header)["yaml"]
    except PackNotValid as exc:
        raise OpenApiError(f"{source}: {exc}") from None
    return path, spec, document, time.perf_counter() - started


def _read_overlay(path: Path) -> OpenApiOverlay | None:
    try:
        return load_overlay(path, OpenApiOverlay)
    except SgdSchemaError as exc:
        raise OpenApiError(str(exc)) from None


SPEC_SUFFIXES = (".yaml", ".yml", ".json")


def import_summary(pack: dict, document: ApiDocument, seconds: float) -> dict:
    """What an import found: operations, arguments, outputs, dataflow edges and what was left out."""
    left_out = document.every_part_left_out()
    return {"pack": pack["name"], "operations_in_spec": len(document.operations) + len(document.left_out),
            "operations": len(pack["apis"]), "arguments": len(pack["arguments"]),
            "required_arguments": sum(len([a for a in api["arguments"] if a not in api.get("optional", {})])
                                      for api in pack["apis"].values()),
            "outputs": sum(1 for api in pack["apis"].values() if api["http"]["output"]),
            "dataflow_edges": len(dataflow_edges(pack)), "left_out": len(left_out), "left_out_parts": left_out,
            "import_s": round(seconds, 2), "base_url": pack.get("http_base_url", ""),
            "auth_env": (pack.get("http_auth") or {}).get("env", "")}


def import_folder(specs_dir: Path, packs_dir: Path, progress=lambda _: None) -> tuple[list[dict], dict[str, str]]:
    """Import and validate every spec of a folder into `packs_dir`, each under its default name: a row per
    spec (what it holds, or why it was refused) and spec (file stem) -> pack name for those imported."""
    rows, packs = [], {}
    for path in sorted(p for p in Path(specs_dir).iterdir() if p.suffix in SPEC_SUFFIXES):
        progress(f"importing {path.name}")
        try:
            _, pack, document, seconds = import_openapi(path, packs_dir)
        except OpenApiError as exc:
            rows.append({"spec": path.stem, "imported": False, "error": str(exc)})
            continue
        packs[path.stem] = pack["name"]
        rows.append({"spec": path.stem, "imported": True, "validated": True, **import_summary(pack, document, seconds)})
    return rows, packs
