"""API execution behind one interface.

`simulated`: deterministic outputs from the call itself (an id made from the API and its arguments), so
demos and tests run offline and a repeated call returns the same.
`replay`: the answers a service is known to have given (SGD's `service_results`): a call that agrees with
a recorded one (values compared as `values/canonical.py` reads them) gets its first result record, whose
fields later arguments of the same name take; any other call is answered as `simulated` would.
`http`: each API as the pack declares it (`apis.<name>.http`: method, path template, body, query and header
mapping, JSON or form body, the answer's output field), with the pack's credentials (`http_auth`) read
from the environment. Connection errors, timeouts and 5xx answers are retried with
backoff, every attempt of one call carrying the same `Idempotency-Key` (the session and the call), so a
server that honours it writes once; a call that still fails raises ExecutionError with the API's words.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
import json
import os
import re
import time
from typing import Protocol
from urllib.parse import quote  # a value is one path segment: a slash in it stays inside

import httpx

from pipeline.packs.pack import Pack
from pipeline.sessions.records import Candidate, ExecutedCall, RecordedCall
from pipeline.settings import settings
from pipeline.values.canonical import same_call


class ExecutionError(Exception):
    """An API call that failed for good; the session ends with `fail` and this message."""


class Executor(Protocol):
    name: str

    def call(self, api: str, args: dict[str, str]) -> str | dict[str, str] | Answer:
        """Carry out one call with its arguments' values (outputs of earlier calls already substituted):
        its output, or a record of fields (a search result)."""


@dataclass(frozen=True)
class Answer:
    """An output with fields beside it: the identifiers a later argument of each name takes instead, and
    the arguments whose identifier the answer did not hold."""
    output: str
    fields: dict[str, str]
    lacks: tuple[str, ...] = ()
    candidates: tuple[tuple[str, str], ...] = ()  # (id, what it is called) of each thing a list found, where several


def executed_call(api: str, args: dict, answer: str | dict[str, str] | Answer, turn: int) -> ExecutedCall:
    """The session's record of a call; a record answer keeps its fields and is shown as its first ones."""
    if isinstance(answer, Answer):
        return ExecutedCall(api=api, args=args, output=answer.output, fields=answer.fields,
                            lacks=list(answer.lacks), turn=turn,
                            candidates=[Candidate(id=i, label=label) for i, label in answer.candidates])
    if isinstance(answer, dict):
        shown = ", ".join(f"{k}={v}" for k, v in list(answer.items())[:3])
        return ExecutedCall(api=api, args=args, output=shown or "{}", fields=answer, turn=turn)
    return ExecutedCall(api=api, args=args, output=answer, turn=turn)


def _call_digest(*parts) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()


class SimulatedExecutor:
    name = "simulated"

    def __init__(self, pack: Pack, session_id: str = ""):
        self.pack = pack

    def call(self, api: str, args: dict[str, str]) -> str:
        if api not in self.pack.spec.apis:
            raise ExecutionError(f"{api} is not an API of {self.pack.name}")
        return f"{self.pack.spec.apis[api].produces or api}-{_call_digest(api, args)[:8]}"


class ReplayExecutor(SimulatedExecutor):
    name = "replay"

    def __init__(self, pack: Pack, session_id: str = "", recorded: list[RecordedCall] = ()):
        super().__init__(pack, session_id)
        self.recorded = list(recorded)

    def call(self, api: str, args: dict[str, str]) -> str | dict[str, str]:
        spec = self.pack.spec.apis.get(api)
        for known in self.recorded:
            if known.api == api and spec is not None and same_call(self.pack.normalizers, spec.optional, args,
                                                                   known.args):
                if known.results:
                    return dict(known.results[0])
                break
        return super().call(api, args)


class HttpExecutor:
    name = "http"
    RETRY_STATUSES = range(500, 600)

    def __init__(self, pack: Pack, session_id: str = "", base_url: str | None = None,
                 timeout_s: float | None = None, retries: int | None = None, backoff_s: float = 0.2):
        s = settings()
        self.pack, self.session_id = pack, session_id
        self.base_url = base_url or s.http_base_url or pack.spec.http_base_url
        if not self.base_url:
            raise ExecutionError(f"pack {pack.name} has no http_base_url (set it, or NESYPLAN_HTTP_BASE_URL)")
        self.timeout_s = timeout_s if timeout_s is not None else s.http_timeout_s
        self.retries = retries if retries is not None else s.http_retries
        self.backoff_s = backoff_s

    def call(self, api: str, args: dict[str, str]) -> str:
        spec = self.pack.spec.apis.get(api)
        if spec is None or spec.http is None:
            raise ExecutionError(f"{api} has no http binding in pack {self.pack.name}")
        binding = spec.http
        missing = [name for name in re.findall(r"{(\w+)}", binding.path) if name not in args]
        if missing:
            raise ExecutionError(f"{api}: no value for {', '.join(missing)}, which its path needs")
        broken = [a for a in binding.headers.values() if a in args and re.search(r"[\r\n\x00]", args[a])]
        if broken:  # a line break in a header would end it and start another: refused, not sent
            raise ExecutionError(f"{api}: the value of {broken[0]} cannot go in a request header (a line break)")
        request = {
            "method": binding.method,
            "url": self.base_url.rstrip("/") + binding.path.format(**{k: quote(v, safe="") for k, v in args.items()}),
            # an optional argument nobody gave is left out of the request, not sent empty
            "params": {name: _query_value(binding, argument, args[argument])
                       for name, argument in binding.query.items() if argument in args},
            "headers": {"Idempotency-Key": _call_digest(self.session_id, api, args)[:32],
                        **{name: args[argument] for name, argument in binding.headers.items() if argument in args}},
        }
        auth = self._credentials(binding)
        self._authenticate(request, auth)
        if binding.body:  # an operation that takes no body is sent none, not an empty one
            fields = {name: _typed(args[argument], "digits") if binding.types.get(argument) == "digits" else args[argument]
                      for name, argument in binding.body.items() if argument in args}
            if binding.multipart:  # each field a part of its own, with no file name
                request["files"] = {name: (None, value) for name, value in fields.items()}
            elif binding.form:
                request["data"] = fields
            else:
                request["json"] = _json_body(binding, args)
        answer = self._send(api, request, auth)
        body = _body(answer)  # parsed once: the output, the things found and each field are read from it
        output, found = _output(api, binding, answer, body), _candidates(binding, body)
        if not binding.outputs and not found:
            return output
        held = {argument: _at(body, path) for argument, path in binding.outputs.items()}
        return Answer(output, {a: v for a, v in held.items() if v is not None},
                      tuple(a for a, v in held.items() if v is None), found)

    def _credentials(self, binding):
        """The credentials an API is sent with: its own where it names them, else the pack's."""
        return self.pack.spec.http_auths.get(binding.auth) if binding.auth else self.pack.spec.http_auth

    def _authenticate(self, request: dict, auth) -> None:
        """Credentials from the environment; none set, none sent (a public API needs none, and one that
        does answers 401, which names the variable to set)."""
        secret = os.environ.get(auth.env, "") if auth else ""
        if not secret:
            return
        if auth.scheme == "bearer":
            request["headers"]["Authorization"] = f"Bearer {secret}"
        elif auth.scheme == "basic":
            user, _, password = secret.partition(":")
            request["auth"] = (user, password)
        elif auth.scheme == "header":
            request["headers"][auth.name] = secret
        else:
            request["params"][auth.name] = secret

    def _send(self, api: str, request: dict, auth) -> httpx.Response:
        problem = ""
        with httpx.Client(timeout=self.timeout_s) as client:
            for attempt in range(self.retries + 1):
                if attempt:
                    time.sleep(self.backoff_s * 2 ** (attempt - 1))
                try:
                    answer = client.request(**request)
                except httpx.TimeoutException:
                    problem = f"no answer within {self.timeout_s:g} s"
                    continue
                except httpx.TransportError as exc:
                    problem = f"cannot reach {request['url']}: {type(exc).__name__}"
                    continue
                if answer.status_code in self.RETRY_STATUSES:
                    problem = f"HTTP {answer.status_code}: {_message(answer)}"
                    continue
                if answer.status_code >= 400:  # the API refused the call: asking again would not help
                    hint = ""
                    if answer.status_code in (401, 403) and auth and not os.environ.get(auth.env):
                        hint = f" (set {auth.env} to the API's credentials)"
                    raise ExecutionError(f"{api} refused: HTTP {answer.status_code}: {_message(answer)}{hint}")
                return answer
        raise ExecutionError(f"{api} failed after {self.retries + 1} attempts: {problem}")


def _typed(value: str, kind: str | None):
    """A value as its JSON type; one that does not read as that type is sent as written, for the API to
    refuse in its own words.

    >>> _typed("2500.00", "integer"), _typed("12.5", "integer"), _typed("n/a", "integer"), _typed("4", "number")
    (2500, '12.5', 'n/a', 4.0)
    """
    try:
        if kind == "integer":  # an amount read as money ("2500.00") is sent as the whole number it is
            number = Decimal(value)
            return int(number) if number == number.to_integral_value() else value
        if kind == "number":
            return float(value)
    except (ValueError, InvalidOperation):
        return value
    if kind == "boolean":
        return {"true": True, "false": False}.get(value.strip().lower(), value)
    if kind == "array":
        return [part.strip() for part in value.split(",") if part.strip()]
    if kind == "date":  # a day as the normalisers write it (MM/DD/YYYY), as APIs take it (ISO 8601)
        month, day, year = (value.split("/") + ["", "", ""])[:3]
        return f"{year}-{month}-{day}" if year.isdigit() and len(year) == 4 else value
    if kind == "dates":
        return [_typed(part.strip(), "date") for part in value.split(",") if part.strip()]
    if kind == "digits":  # a pattern of digits alone: "608-555-0123" is sent as 6085550123
        return re.sub(r"\D", "", value) or value
    return value


def _query_value(binding, argument: str, value: str) -> str:
    """A query parameter is text; a day in it is written as ISO 8601 too, digits alone where so typed."""
    kind = binding.types.get(argument)
    return _typed(value, kind) if kind in ("date", "digits") else value


def _json_body(binding, args: dict[str, str]):
    """The JSON body: a field named `a.b` goes into object `a`, one named `a[].b` into the one item of list
    `a`; a field named '' is the whole body."""
    body: dict = {}
    for name, argument in binding.body.items():
        if argument not in args:
            continue
        value = _typed(args[argument], binding.types.get(argument))
        if name == "":
            try:
                return json.loads(args[argument]) if binding.types.get(argument) is None else value
            except ValueError:
                return value
        *parents, last = name.split(".")
        node = body
        for parent in parents:
            node = node.setdefault(parent[:-2], [{}])[0] if parent.endswith("[]") else node.setdefault(parent, {})
        node[last] = value
    return body


_NO_JSON = object()  # an answer whose body is no JSON


def _body(answer: httpx.Response):
    """The answer's JSON body, `_NO_JSON` where it has none."""
    try:
        return answer.json()
    except ValueError:
        return _NO_JSON


def _output(api: str, binding, answer: httpx.Response, body=None) -> str:
    """The call's output: the binding's field of the answer (of its first item when it is a list; a path
    `results[].id` walks into the first item of a list inside it). `body`: the answer's JSON, already parsed
    (`_body`); None: parsed here."""
    if not binding.output:
        return f"done (HTTP {answer.status_code})"
    node = _body(answer) if body is None else body
    if node is _NO_JSON:
        raise ExecutionError(f"{api} answered without a {binding.output!r} field: {answer.text[:200]}")
    for part in binding.output.split("[]."):
        if isinstance(node, list):
            if not node:
                raise ExecutionError(f"{api} found nothing")
            node = node[0]
        if not isinstance(node, dict) or part not in node:
            raise ExecutionError(f"{api} answered without a {binding.output!r} field: {answer.text[:200]}")
        node = node[part]
    return str(node)


MAX_CANDIDATES = 10  # things of a list offered to choose from; a longer list is narrowed by more words
# The fields a thing is called by, first found first (a person's whole name before a first name alone).
_LABELS = ("name", "title", "full_name", "display_name", "label", "username", "email", "first_name", "phone")


def _candidates(binding, node) -> tuple[tuple[str, str], ...]:
    """Where the output is read from a list (`data[].id`, or an answer that is a list) that holds more than
    one thing: each thing's id and what it is called (its name, title, ... or its first plain field), so the
    user chooses which; empty where one thing or none was found. `node`: the answer's JSON (`_body`)."""
    if not binding.output or node is _NO_JSON:
        return ()
    parts = binding.output.split("[].")
    for i, part in enumerate(parts):
        if isinstance(node, list):
            items = [item for item in node if isinstance(item, dict)]
            if len(items) < 2:
                return ()
            found = []
            for item in items[:MAX_CANDIDATES]:
                ident = _walk(item, parts[i:])
                if ident is not None:
                    found.append((ident, _label(item, parts[-1])))
            return tuple(found) if len(found) > 1 else ()
        if not isinstance(node, dict) or part not in node:
            return ()
        node = node[part]
    return ()


def _label(item: dict, id_field: str) -> str:
    plain = {k: v for k, v in item.items() if k != id_field and isinstance(v, (str, int, float)) and str(v).strip()}
    given = [str(plain[k]) for k in _LABELS if k in plain]
    if "first_name" in plain and "last_name" in plain and not any(k in plain for k in _LABELS[:4]):
        given = [f"{plain['first_name']} {plain['last_name']}"]
    return given[0] if given else next((str(v) for v in plain.values()), "")


def _walk(node, parts: list[str]) -> str | None:
    """The field `parts` lead to as the output's path is read (`_output`: into the first item of a list on the
    way, whatever the path says), None where there is none."""
    for part in parts:
        if isinstance(node, list):
            node = node[0] if node else None
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return None if node is None or isinstance(node, (dict, list)) else str(node)


def _at(node, path: str) -> str | None:
    """The field at `path` of a parsed answer (the first item of each list on the way); None where it has none."""
    for part in path.split("."):
        listed = part.endswith("[]")
        if not isinstance(node, dict) or part.removesuffix("[]") not in node:
            return None
        node = node[part.removesuffix("[]")]
        if listed:
            if not isinstance(node, list) or not node:
                return None
            node = node[0]
    return None if node is None or isinstance(node, (dict, list)) else str(node)


def _message(answer: httpx.Response) -> str:
    """What the API said: FastAPI-style `detail`, else the start of the body."""
    try:
        body = answer.json()
        if isinstance(body, dict) and "detail" in body:
            return str(body["detail"])[:300]
    except ValueError:
        pass
    return answer.text[:300] or answer.reason_phrase


EXECUTORS = {"simulated": SimulatedExecutor, "http": HttpExecutor, "replay": ReplayExecutor}


def get_executor(kind: str, pack: Pack, session_id: str = "", recorded: list[RecordedCall] = ()) -> Executor:
    if kind not in EXECUTORS:
        raise ExecutionError(f"unknown executor {kind!r} ({', '.join(EXECUTORS)})")
    if kind == "replay":
        return ReplayExecutor(pack, session_id=session_id, recorded=recorded)
    return EXECUTORS[kind](pack, session_id=session_id)
