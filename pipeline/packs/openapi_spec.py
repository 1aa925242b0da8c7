"""An OpenAPI 3.0/3.1 or Swagger 2.0 document read as operations: what each takes, where each value goes
in the request, and what its answer holds.

`$ref`s are resolved by jsonref, inside the document only (a remote reference is refused, never fetched).
Real specs have defects, so reading is lenient where it can be and says what it left out:

- an operation whose own parts cannot be read (a `$ref` that points nowhere, a required field of a kind
  no argument can carry) is left out, with the reason naming it and the field;
- an optional field of that kind is left out of its operation, with the reason;
- a schema that contains itself is flattened once: the second time round it is left out.

How a request body becomes fields: an object's properties are fields named by their path (`category.id`),
down to `MAX_DEPTH` objects deep; `readOnly` properties are the server's, not the caller's; a list of plain
values is one field (its values written with commas); a required list of objects in a body is its first
item's fields (`line_items[].quantity`), that item built from the request, its required fields asked for;
any other list of objects has no field (an optional one is left out and reported).

>>> doc = read_document({"openapi": "3.0.3", "info": {"title": "Zoo"}, "paths": {"/animals/{animalId}": {
...     "get": {"operationId": "getAnimal", "parameters": [{"name": "animalId", "in": "path", "required": True,
...             "schema": {"type": "integer"}}],
...             "responses": {"200": {"description": "ok", "content": {"application/json": {"schema": {
...                 "type": "object", "properties": {"id": {"type": "integer"}, "name": {"type": "string"}}}}}}}}}}})
>>> op = doc.operations[0]
>>> op.key, [(f.wire, f.location, f.kind, f.required) for f in op.fields], op.outputs
('getAnimal', [('animalId', 'path', 'integer', True)], ['id', 'name'])
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Literal
from urllib.parse import urljoin

import jsonref
import yaml
from pydantic import BaseModel

METHODS = ("get", "put", "post", "patch", "delete")
MAX_DEPTH = 3
Kind = Literal["string", "integer", "number", "boolean", "array"]
SCALAR_TYPES = {"string", "integer", "number", "boolean"}
ID_FIELD = re.compile(r"(?:^|_)(?:id|sid|uuid|key)$")


class OpenApiError(Exception):
    """A document that cannot become a pack; the message names the operation and the field."""


class RequestField(BaseModel):
    wire: str                     # its name in the request; a nested body field by its path: `category.id`;
                                  # '' is the whole body (a body that is one value)
    location: Literal["path", "query", "header", "body", "form"]
    required: bool
    kind: Kind = "string"
    format: str = ""
    enum: list[str] = []
    default: str | None = None
    description: str = ""
    example: str = ""             # a value the document shows for it (a plain one: no object or list)
    pattern: str = ""             # the regular expression its values must match, as the document writes it
    owner: str = ""               # the named schema whose property it is (`Order` for an order's status)


class Operation(BaseModel):
    key: str                      # its operationId, else "METHOD /path"
    operation_id: str = ""
    method: str
    path: str
    summary: str = ""
    description: str = ""
    tags: list[str] = []
    fields: list[RequestField] = []
    encoding: Literal["json", "form", "multipart"] = "json"  # how its body is sent
    outputs: list[str] = []       # the answer's plain fields, identifiers first
    entity: str = ""              # the named schema of the answer (of its items, for a list)
    answers_list: bool = False
    listed_ids: list[str] = []    # identifiers of the items of a list inside the answer: `results[].id`
    answer_fields: list[str] = []  # every top-level field of the answer (of its items, for a list), as written
    auth: str = ""                # the security scheme it is sent with where not the document's own (`auth`)
    held_ids: dict[str, list[str]] = {}  # each identifier inside the answer (`networks[].id`, `collection.id`)
                                         # -> the fields of the object that holds it (what it identifies)
    left_out: list[str] = []      # fields it could not carry, with why


class Auth(BaseModel):
    scheme: Literal["bearer", "basic", "header", "query"]
    name: str = ""                # the header or query parameter an API key goes in


class ApiDocument(BaseModel):
    title: str = ""
    description: str = ""
    version: str                  # "2.0", "3.0.x" or "3.1.x"
    base_url: str = ""
    auth: Auth | None = None      # the credentials most operations are sent with
    auths: dict[str, Auth] = {}   # other schemes by name, for operations that ask for one of them instead
    operations: list[Operation]
    left_out: list[str] = []      # operations it could not read, with why

    def every_part_left_out(self) -> list[str]:
        """What was left out: whole operations, then parts of those read (each with its operation)."""
        return self.left_out + [f"{op.key}: {why}" for op in self.operations for why in op.left_out]


def load_document(path: Path) -> ApiDocument:
    """Read a spec file (YAML or JSON)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise OpenApiError(f"{path}: cannot read it: {exc}") from None
    try:
        raw = json.loads(text) if str(path).endswith(".json") else yaml.safe_load(text)
    except (ValueError, yaml.YAMLError) as exc:
        raise OpenApiError(f"{path}: not valid {'JSON' if str(path).endswith('.json') else 'YAML'}: {exc}") from None
    try:
        return read_document(raw)
    except OpenApiError as exc:
        raise OpenApiError(f"{path}: {exc}") from None


def read_document(raw) -> ApiDocument:
    """An already parsed document."""
    if not isinstance(raw, dict):
        raise OpenApiError("an OpenAPI document is a mapping at the top")
    version = str(raw.get("openapi") or raw.get("swagger") or "")
    if not re.match(r"(2\.0|3\.[01])(\.|$)", version):
        raise OpenApiError(f"not OpenAPI 3.0/3.1 or Swagger 2.0 (openapi/swagger: {version or 'missing'!r})")
    if not isinstance(raw.get("paths"), dict):
        raise OpenApiError("no `paths`: the document describes no operation")
    resolved = jsonref.replace_refs(raw, lazy_load=True, proxies=True, loader=_refuse_remote)
    swagger2 = version.startswith("2")
    schemes = _security_schemes(raw, swagger2)
    credential_headers = _credential_headers(schemes)
    info = raw.get("info") if isinstance(raw.get("info"), dict) else {}
    default, auth = _auth(raw, schemes)
    document = ApiDocument(title=str(info.get("title", "")), description=str(info.get("description", "")),
                           version=version, base_url=_base_url(raw, swagger2), auth=auth, operations=[])
    for path, item in raw["paths"].items():
        if not isinstance(item, dict):
            continue
        for method in METHODS:
            if method not in item:
                continue
            key = item[method].get("operationId") if isinstance(item[method], dict) else None
            where = key or f"{method.upper()} {path}"
            try:
                operation = _operation(resolved["paths"][path], method, path, swagger2, credential_headers)
            except jsonref.JsonRefError as exc:
                document.left_out.append(f"{where}: {_ref_problem(exc)}")
                continue
            except _Unreadable as exc:
                document.left_out.append(f"{where}: {exc}")
                continue
            operation.auth = _operation_auth(item[method], schemes, default)
            if operation.auth:
                document.auths.setdefault(operation.auth, _carried(schemes[operation.auth]))
            document.operations.append(operation)
    if not document.operations:
        raise OpenApiError("no operation could be read" + (": " + "; ".join(document.left_out[:5])
                                                           if document.left_out else ""))
    return document


class _Unreadable(Exception):
    """Part of an operation that cannot be carried (a required list of objects, a cycle it needs)."""


def _refuse_remote(uri: str):
    raise ValueError(f"a $ref outside the document ({uri}) is not read")


def _ref_problem(exc: jsonref.JsonRefError) -> str:
    ref = exc.reference.get("$ref") if isinstance(getattr(exc, "reference", None), dict) else None
    return f"$ref {ref!r} cannot be resolved" if ref else str(exc).split("\n")[0]


def _ref_name(node) -> str:
    """The schema's name when it is a `$ref` (`#/components/schemas/Pet` -> Pet), else ''."""
    if isinstance(node, jsonref.JsonRef):
        return str(node.__reference__.get("$ref", "")).rsplit("/", 1)[-1]
    return ""


def _base_url(raw: dict, swagger2: bool) -> str:
    if swagger2:
        host = raw.get("host")
        if not host:
            return str(raw.get("basePath", "") or "")
        schemes = raw.get("schemes") or ["https"]
        scheme = "https" if "https" in schemes else schemes[0]
        return f"{scheme}://{host}{raw.get('basePath', '') or ''}"
    servers = raw.get("servers") or []
    url = str(servers[0].get("url", "")) if servers and isinstance(servers[0], dict) else ""
    for name, variable in ((servers[0].get("variables") or {}).items() if url else []):
        url = url.replace("{" + name + "}", str(variable.get("default", "")))
    return url


def join_base_url(given: str, spec_url: str) -> str:
    """Where requests go: a spec URL that is absolute wins unless one is given; a relative one (`/api/v3`)
    is joined to the given one."""
    if not given:
        return spec_url if re.match(r"https?://", spec_url) else ""
    if spec_url and not re.match(r"https?://", spec_url):
        return urljoin(given.rstrip("/") + "/", spec_url.lstrip("/")).rstrip("/")
    return given.rstrip("/")


def _security_schemes(raw: dict, swagger2: bool) -> dict:
    """The document's security schemes by name (Swagger 2's `securityDefinitions`)."""
    schemes = raw.get("securityDefinitions") if swagger2 else (raw.get("components") or {}).get("securitySchemes")
    return schemes if isinstance(schemes, dict) else {}


def _carried(scheme) -> Auth | None:
    """How a request carries one security scheme's credentials; None for one it cannot (mutual TLS, say)."""
    if not isinstance(scheme, dict):
        return None
    kind, how = scheme.get("type"), str(scheme.get("scheme", "")).lower()
    if kind == "apiKey" and scheme.get("in") in ("header", "query"):
        if str(scheme.get("name", "")).lower() == "authorization":
            return Auth(scheme="bearer")
        return Auth(scheme=scheme["in"], name=str(scheme.get("name", "")))
    if kind == "http" and how in ("bearer", "basic"):
        return Auth(scheme=how)
    if kind == "basic":
        return Auth(scheme="basic")
    if kind in ("oauth2", "openIdConnect"):  # the caller brings an access token
        return Auth(scheme="bearer")
    return None


def _preferred(names, schemes: dict) -> str | None:
    """Of the schemes named, the one to send: an API key or a token the caller has beats an OAuth flow;
    among equals, the one named first."""
    order = sorted(dict.fromkeys(names), key=lambda n: isinstance(schemes.get(n), dict)
                   and schemes[n].get("type") in ("oauth2", "openIdConnect"))
    return next((name for name in order if _carried(schemes.get(name)) is not None), None)


def _requirements(spec) -> list[str] | None:
    """The schemes a `security` list names, in order; None where it is absent (the document's then apply)."""
    if not isinstance(spec, dict) or not isinstance(spec.get("security"), list):
        return None
    return [name for requirement in spec["security"] if isinstance(requirement, dict) for name in requirement]


def _auth(raw: dict, schemes: dict) -> tuple[str | None, Auth | None]:
    """The scheme the document asks for first (globally, else on its first operation that asks), by name."""
    if not schemes:
        return None, None
    wanted = list(_requirements(raw) or [])
    for item in raw["paths"].values():
        for method in METHODS:
            wanted += _requirements(item.get(method) if isinstance(item, dict) else None) or []
    name = _preferred([*wanted, *schemes], schemes)
    return name, _carried(schemes.get(name)) if name else None


def _operation_auth(spec: dict, schemes: dict, default: str | None) -> str:
    """The scheme an operation is sent with where its own `security` asks for others than the document's
    (a pet store's reads by API key, its writes by OAuth token): that scheme's name; else ''."""
    own = _requirements(spec)
    if own is None or not own or default in own:
        return ""
    return _preferred(own, schemes) or ""


def _operation(item, method: str, path: str, swagger2: bool, credential_headers: set[str]) -> Operation:
    spec = item[method]
    operation_id = str(spec.get("operationId") or "")
    operation = Operation(key=operation_id or f"{method.upper()} {path}", operation_id=operation_id,
                          method=method.upper(), path=path, summary=str(spec.get("summary") or ""),
                          description=str(spec.get("description") or ""), tags=[str(t) for t in spec.get("tags") or []])
    parameters = {}
    for parameter in [*(item.get("parameters") or []), *(spec.get("parameters") or [])]:
        parameters[(parameter.get("name"), parameter.get("in"))] = parameter  # the operation's own wins
    body_fields, form_fields = [], []
    for (name, where), parameter in parameters.items():
        if where == "header" and str(name).lower() in credential_headers:
            continue  # the pack's credentials go there, from the environment
        if where == "path" and "{" + str(name) + "}" not in path:  # a defect of the document: sent nowhere
            operation.left_out.append(f"path parameter {name!r}: the path {path} has no place for it")
            continue
        if where in ("path", "query", "header"):
            schema = parameter if swagger2 else parameter.get("schema") or {}
            _add_field(operation, RequestField(wire=str(name), location=where,
                                               required=bool(parameter.get("required")) or where == "path",
                                               description=str(parameter.get("description") or "")), schema)
        elif where == "body":  # Swagger 2: one body parameter with a schema
            body_fields = _body_fields(operation, parameter.get("schema") or {}, bool(parameter.get("required")))
        elif where == "formData":
            form_fields.append(parameter)
    for name in re.findall(r"\{([^{}/]+)\}", path):
        if (name, "path") not in parameters:  # a defect of the document: a place in its path nothing fills
            _add_field(operation, RequestField(wire=name, location="path", required=True,
                                               description=f"the {name} in the path (the document does not "
                                                           "declare it)"), {"type": "string"})
    if form_fields:  # a form; multipart where the operation takes only that (an upload)
        consumes = spec.get("consumes") or []
        operation.encoding = ("multipart" if "multipart/form-data" in consumes
                              and "application/x-www-form-urlencoded" not in consumes else "form")
        for parameter in form_fields:
            _add_field(operation, RequestField(wire=str(parameter["name"]), location="form",
                                               required=bool(parameter.get("required")),
                                               description=str(parameter.get("description") or "")), parameter)
    if not swagger2 and spec.get("requestBody"):
        body = spec["requestBody"]
        content = body.get("content") or {}
        media = _json_media(content)
        if media is None and any(m in content for m in ("application/x-www-form-urlencoded", "multipart/form-data")):
            urlencoded = "application/x-www-form-urlencoded" in content
            media = content["application/x-www-form-urlencoded" if urlencoded else "multipart/form-data"]
            operation.encoding = "form" if urlencoded else "multipart"
        if media is None:
            if body.get("required"):
                raise _Unreadable(f"its request body is only {', '.join(content) or 'unspecified'}, which no "
                                  "argument can carry")
            operation.left_out.append(f"request body ({', '.join(content)}): not JSON or a form")
        else:
            # A body not marked `required: false` is taken as sent: its schema's required fields are asked for.
            body_fields = _body_fields(operation, media.get("schema") or {}, body.get("required", True) is not False)
    for field in body_fields:
        if operation.encoding != "json":
            field.location = "form"
        operation.fields.append(field)
    _read_answer(operation, spec.get("responses") or {}, swagger2)
    return operation


def _credential_headers(schemes: dict) -> set[str]:
    """The headers credentials go in (lower case): no operation's argument."""
    named = {str(s.get("name", "")).lower() for s in schemes.values()
             if isinstance(s, dict) and s.get("type") == "apiKey" and s.get("in") == "header"}
    return named | {"authorization"}


def _json_media(content: dict):
    for media, value in content.items():
        if media == "application/json" or media.endswith("+json") or media == "*/*":
            return value if isinstance(value, dict) else {}
    return None


def _schema_kind(schema) -> tuple[str, list]:
    """(type, enum) of a schema, reading 3.1's type lists, nullable alternatives and an `allOf` of one."""
    for combiner in ("allOf", "oneOf", "anyOf"):
        parts = [p for p in schema.get(combiner) or [] if isinstance(p, dict) and p.get("type") != "null"]
        if parts and "type" not in schema and "properties" not in schema:
            if combiner == "allOf" and len(parts) > 1:
                return "object", []
            return _schema_kind(parts[0])
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "string")
    if kind is None:
        kind = "object" if "properties" in schema else "string"
    # a value of no words (`""` for "not set", as specs write it) is no value a user can name
    return str(kind), [str(v) for v in schema.get("enum") or [] if v is not None and str(v).strip()]


def _properties(schema) -> tuple[dict, set]:
    """(properties, required names) of an object schema, `allOf` parts merged; none of a schema that is
    not one (a list where a schema belongs, in a broken spec)."""
    if not isinstance(schema, dict):
        return {}, set()
    listed = schema.get("properties")
    properties = dict(listed) if isinstance(listed, dict) else {}
    names = schema.get("required")
    required = {name for name in names if isinstance(name, str)} if isinstance(names, list) else set()
    for part in schema.get("allOf") if isinstance(schema.get("allOf"), list) else []:
        inner, needed = _properties(part)
        properties.update(inner)
        required |= needed
    for combiner in ("oneOf", "anyOf"):
        if not properties and isinstance(schema.get(combiner), list) and schema[combiner]:
            return _properties(schema[combiner][0])
    return properties, required


def _add_field(operation: Operation, field: RequestField, schema) -> None:
    kind, enum = _schema_kind(schema)
    if kind == "bool":  # a defect seen in published specs
        kind = "boolean"
    if kind == "array":
        items_kind, items_enum = _schema_kind(schema.get("items") or {})
        if items_kind not in SCALAR_TYPES:
            return _cannot_carry(operation, field, "a list of objects")
        enum = enum or items_enum
    elif kind not in SCALAR_TYPES:
        return _cannot_carry(operation, field, f"of type {kind!r}")
    field.kind, field.enum = kind, enum
    field.format = str(schema.get("format") or (kind == "array" and (schema.get("items") or {}).get("format")) or "")
    if schema.get("default") is not None and not isinstance(schema.get("default"), (dict, list)):
        default = schema["default"]
        field.default = str(default).lower() if isinstance(default, bool) else str(default)
    field.description = field.description or str(schema.get("description") or schema.get("title") or "")
    field.pattern = str(schema.get("pattern") or "") if isinstance(schema.get("pattern"), str) else ""
    examples = schema.get("examples") if isinstance(schema.get("examples"), list) else []
    example = schema.get("example", examples[0] if examples else None)
    if example is not None and not isinstance(example, (dict, list)):
        field.example = str(example)
    operation.fields.append(field)


def _cannot_carry(operation: Operation, field: RequestField, what: str) -> None:
    part = f"{field.location} field {field.wire!r}" if field.wire else f"{field.location} (the whole of it)"
    if field.required:
        raise _Unreadable(f"required {part} is {what}, which no argument can carry")
    operation.left_out.append(f"{part}: {what}")


def _body_fields(operation: Operation, schema, required: bool) -> list[RequestField]:
    """The body's fields, flattened (the module docstring's rule); added to a scratch operation first so
    that what is left out is reported on the real one."""
    scratch = Operation(key=operation.key, method=operation.method, path=operation.path)
    kind, _ = _schema_kind(schema)
    if kind != "object":
        # The body is one value (a list, or a schema the document leaves empty): one field, sent as the body.
        _add_field(scratch, RequestField(wire="", location="body", required=required, owner=_ref_name(schema),
                                         description=str(schema.get("description") or "")), schema)
    else:
        _flatten(scratch, schema, "", required, 1, (_ref_name(schema),) if _ref_name(schema) else ())
    operation.left_out += scratch.left_out
    return scratch.fields


def _flatten(operation: Operation, schema, prefix: str, required: bool, depth: int, seen: tuple) -> None:
    properties, needed = _properties(schema)
    owner = seen[-1] if seen else ""
    for name, child in properties.items():
        wire = f"{prefix}{name}"
        if not isinstance(child, dict) or child.get("readOnly"):
            continue
        child_required = required and name in needed
        kind, _ = _schema_kind(child)
        inner, joint, what = child, ".", "an object that contains itself"
        items = child.get("items") if kind == "array" and isinstance(child.get("items"), dict) else None
        if child_required and items is not None and _schema_kind(items)[0] == "object" and _properties(items)[0]:
            # A required list of objects: its first item, built from the request (`line_items[].quantity`),
            # its required fields asked for, never the call dropped unsaid. An optional one stays out: its
            # items' fields would only compete for the words of the call's own (a pet's tags' `name`).
            inner, joint, what = items, "[].", "a list of objects that contain themselves"
        if inner is items or kind == "object" and "properties" in child or _properties(child)[0]:
            ref = _ref_name(inner)
            if ref in seen or depth >= MAX_DEPTH:
                _cannot_carry(operation, RequestField(wire=wire, location="body", required=child_required),
                              what if ref in seen else f"nested over {MAX_DEPTH} deep")
                continue
            _flatten(operation, inner, wire + joint, child_required, depth + 1, (*seen, ref) if ref else seen)
            continue
        _add_field(operation, RequestField(wire=wire, location="body", required=child_required, owner=owner), child)


def _read_answer(operation: Operation, responses: dict, swagger2: bool) -> None:
    """The first 2xx answer with a schema: its plain top-level fields (identifiers first) and its name."""
    for code in sorted(str(c) for c in responses):
        if not re.fullmatch(r"2\d\d", code):
            continue
        try:  # an answer we cannot read leaves the call usable, with no output to pass on
            answer = responses.get(code) if code in responses else responses.get(int(code))
            if not isinstance(answer, dict):
                continue
            media = answer if swagger2 else _json_media(answer.get("content") or {}) or {}
            schema = media.get("schema")
            if not isinstance(schema, dict):
                continue
            kind, _ = _schema_kind(schema)
            if kind == "array":
                operation.answers_list, schema = True, schema.get("items") or {}
            operation.entity = _ref_name(schema) or next(
                (_ref_name(part) for part in schema.get("allOf") or [] if _ref_name(part)), "")
            properties, _ = _properties(schema)
            if "" in properties and not operation.answers_list:
                properties = _named_by_the_example(properties, _example(media, swagger2))
            plain = [name for name, child in properties.items()
                     if isinstance(child, dict) and _schema_kind(child)[0] in SCALAR_TYPES]
            operation.listed_ids = _listed_ids(properties)
            operation.held_ids = _held_ids(properties)
            operation.answer_fields = list(properties)
        except jsonref.JsonRefError as exc:
            operation.left_out.append(f"answer {code}: {_ref_problem(exc)}")
            return
        operation.outputs = sorted(plain, key=lambda n: not ID_FIELD.search(_snake(n)))
        return


def _example(media: dict, swagger2: bool):
    """The answer's first example value (3.x `example` or `examples.*.value`, Swagger 2's `examples`), or None."""
    if swagger2:
        examples = media.get("examples")
        return next(iter(examples.values()), None) if isinstance(examples, dict) and examples else None
    if "example" in media:
        return media["example"]
    examples = media.get("examples")
    first = next(iter(examples.values()), None) if isinstance(examples, dict) and examples else None
    return first.get("value") if isinstance(first, dict) else None


def _named_by_the_example(properties: dict, example) -> dict:
    """A property written with no name (a defect seen in published specs: `"": {$ref: an item}`) takes the name
    of the one key of the answer's example that no property has, and, where the example holds a list there and
    the schema one object, is a list of such objects; without such a key it stays unnamed (and unread).

    >>> _named_by_the_example({"page": {}, "": {"type": "object"}}, {"page": 1, "results": [{"id": 2}]})
    {'page': {}, 'results': {'type': 'array', 'items': {'type': 'object'}}}
    >>> _named_by_the_example({"": {}}, {"a": 1, "b": 2})
    {'': {}}
    """
    if not isinstance(example, dict):
        return properties
    unnamed = [key for key in example if isinstance(key, str) and key and key not in properties]
    if len(unnamed) != 1:
        return properties
    name = unnamed[0]
    child = properties[""]
    if isinstance(example[name], list) and isinstance(child, dict) and _schema_kind(child)[0] == "object":
        child = {"type": "array", "items": child}
    return {(name if key == "" else key): value for key, value in {**properties, "": child}.items()}


def _listed_ids(properties: dict) -> list[str]:
    """`key[].id` for each list of objects in the answer whose items carry an identifier (a search's
    `results`, a page's `items`): the ids a search or a list finds."""
    found = []
    for name, child in properties.items():
        if not isinstance(child, dict) or _schema_kind(child)[0] != "array":
            continue
        items, _ = _properties(child.get("items") or {})
        ids = [k for k, v in items.items() if isinstance(v, dict) and _schema_kind(v)[0] in SCALAR_TYPES
               and ID_FIELD.search(_snake(k))]
        key = min(ids, key=lambda k: (not ID_FIELD.fullmatch(_snake(k)), ids.index(k)), default=None)  # `id` first
        if key:
            found.append(f"{name}[].{key}")
    return found


def _held_ids(properties: dict, prefix: str = "", depth: int = 1) -> dict[str, list[str]]:
    """Path -> the holder's fields, for the identifier of each object inside the answer, in an object
    (`belongs_to_collection.id`) or in a list of them (`cast[].id`), down to MAX_DEPTH - 1 levels."""
    held: dict[str, list[str]] = {}
    if depth >= MAX_DEPTH:
        return held
    for name, child in properties.items():
        if not isinstance(child, dict) or not name.strip():
            continue  # a field without a name cannot be reached
        kind, _ = _schema_kind(child)
        if kind == "array":
            inner, step = _properties(child.get("items") or {}), f"{prefix}{name}[]."
        elif kind == "object":
            inner, step = _properties(child), f"{prefix}{name}."
        else:
            continue
        fields = inner[0]
        ids = [k for k, v in fields.items() if isinstance(v, dict) and _schema_kind(v)[0] in SCALAR_TYPES
               and ID_FIELD.search(_snake(k))]
        key = min(ids, key=lambda k: (not ID_FIELD.fullmatch(_snake(k)), ids.index(k)), default=None)  # `id` first
        if key:
            held[step + key] = list(fields)
        held.update(_held_ids(fields, step, depth + 1))
    return held


def _snake(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()
