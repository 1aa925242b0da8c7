"""`nesyplan corpus-requests`: the request corpus's requests to APIs no shipped part learned from, as an
`eval-openapi` request set: a development measure of imported APIs that is neither a development set nor a
held-out one.

The corpus (`language/data/rest_requests.json`) pairs each request with the operations it needs and, for
the APIs added last, the values it gives under the document's names of the parameters or body fields, as
written. `eval-openapi` judges calls and values under the imported pack's argument names, read by each
argument's normaliser: so each value is put under the argument of the request's operations that the
document's name becomes on import, and judged as its normaliser reads the words written (a date as the
day they name on the set's `today`). A value whose name no argument of those operations takes is left
out and counted. The corpus says nothing of what a request leaves to be asked nor which call feeds which,
so the set judges calls and values only (`asks` and `refs` unset).

>>> same_name("rentalId", "rental_id"), same_name("basePrice", "method_base_price"), same_name("id", "pay_id")
(True, False, False)
"""

from __future__ import annotations

import re
import tempfile
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

from pipeline.authoring.openapi_packs import import_openapi
from pipeline.authoring.writer import PackNotValid
from pipeline.language.readers import reader
from pipeline.language.rest_corpus import RestCorpus
from pipeline.packs.openapi_spec import OpenApiError
from pipeline.packs.pack import Pack, load_pack_at
from pipeline.values import dates
from pipeline.values.moments import a_day

DOCUMENT_SUFFIXES = (".yaml", ".yml", ".json")


@dataclass
class CorpusSet:
    today: str
    specs: dict[str, list[dict]] = field(default_factory=dict)
    values_left_out: list[str] = field(default_factory=list)  # "api: name=value (request)"
    apis_left_out: list[str] = field(default_factory=list)  # no document, or the importer refused it

    def as_requests(self) -> dict:
        """The set as `eval-openapi --requests` reads it."""
        return {"today": self.today, "specs": self.specs}


def _key(name: str) -> str:
    """A name as letters and digits alone: how two spellings of it meet."""
    return re.sub(r"[^a-z0-9]", "", name.lower())


def _field_key(name: str) -> str:
    """A field's name as `_key` writes it, a dotted field (`a.b`, `a[].b`) by its last part."""
    return _key(name.split(".")[-1].replace("[]", ""))


def same_name(document_name: str, argument: str) -> bool:
    """Whether an argument is the document's parameter or field of that name, as the importer names them
    (snake case of the name, the last part of a dotted field)."""
    return _field_key(document_name) == _key(argument)


def argument_of(pack: Pack, goals: list[str], document_name: str) -> str | None:
    """The argument of the goals' operations the document's name became: the one its HTTP binding sends
    under that name, else the one named so, else the one whose name ends with it (a body field the importer
    prefixed with its object's name); None where none or several different ones do."""
    apis = [pack.spec.apis[pack.spec.goals[g].api] for g in goals if g in pack.spec.goals]
    sent = {}
    for api in apis:
        if api.http is not None:
            for wire, argument in {**api.http.body, **api.http.query, **api.http.headers}.items():
                sent.setdefault(_field_key(wire), argument)
    if (argument := sent.get(_key(document_name))) is not None:
        return argument
    arguments = list(dict.fromkeys(a for api in apis for a in api.arguments))
    named = [a for a in arguments if same_name(document_name, a)]
    if named:
        return named[0]
    ending = {a for a in arguments if len(_key(document_name)) > 3 and _key(a).endswith(_key(document_name))}
    if len(ending) == 1:
        return ending.pop()
    if _key(document_name) == "id":  # a path's bare `{id}`, which the importer names after its resource
        placed = [re.findall(r"\{(\w+)\}", api.http.path) for api in apis if api.http is not None]
        return next((found[-1] for found in placed if found), None)
    return None


def expected_value(pack: Pack, argument: str, written: str, today: date) -> str:
    """The value as the argument's reader reads the words written as a whole (the words themselves where it
    reads none): what the planner's value is compared with. A `date` is the one day the words name, behind
    today where they say so, else ahead (`moments.a_day`), not the period of records its reader reads."""
    kind = pack.spec.arguments.get(argument)
    if kind is None:
        return written
    try:
        read = a_day(written, today) if kind.normalizer == "date" else reader(kind.normalizer).whole(written, kind, today)
    except (TypeError, ValueError):
        return written
    if isinstance(read, date):
        read = dates.format_date(read)
    return read if isinstance(read, str) and read else written


def corpus_set(corpus: RestCorpus, documents: Path, apis: list[str] | None = None,
               today: str = "2026-05-04") -> CorpusSet:
    """The corpus's requests to `apis` (default: those whose requests carry values) whose documents are in
    `documents` (`<api>.yaml|yml|json`), with their calls and values under the imported packs' names."""
    chosen = apis or sorted({r.api for r in corpus.requests if r.values})
    result = CorpusSet(today)
    day = dates.parse_today(today)
    with tempfile.TemporaryDirectory(prefix="nesyplan-corpus-") as root:
        for api in chosen:
            found = [p for p in sorted(Path(documents).glob(f"{api}.*")) if p.suffix in DOCUMENT_SUFFIXES]
            if not found:
                result.apis_left_out.append(f"{api}: no document")
                continue
            try:
                import_openapi(found[0], Path(root), api)
            except (OpenApiError, PackNotValid) as exc:
                result.apis_left_out.append(f"{api}: not imported ({str(exc)[:120]})")
                continue
            pack = load_pack_at(Path(root), api)
            cases = []
            for request in (r for r in corpus.requests if r.api == api):
                case = {"request": request.text, "calls": [pack.spec.goals[g].api for g in request.goals
                                                           if g in pack.spec.goals]}
                values = {}
                for name, written in request.values.items():
                    argument = argument_of(pack, request.goals, name)
                    if argument is None:
                        result.values_left_out.append(f"{api}: {name}={written!r} ({request.text})")
                        continue
                    values[argument] = expected_value(pack, argument, written, day)
                if values:
                    case["values"] = values
                cases.append(case)
            result.specs[api] = cases
    return result
