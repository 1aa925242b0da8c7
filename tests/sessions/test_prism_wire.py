"""Every operation of every shared spec (and RestBench's TMDB), called by the `http` executor through its imported pack, against a
Prism mock server made from the same spec: each request must keep to the document (its path, query,
headers, credentials and body, with the types and formats it declares). The values are the ones the
document shows (`example`, else its first `enum` value or its default), else a value of the field's type
written as the pack's normalisers write it (a day as MM/DD/YYYY, which the executor sends as ISO 8601)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pipeline.authoring.openapi_packs import api_names, import_openapi
from pipeline.packs.openapi_spec import Operation, RequestField
from pipeline.packs.pack import load_pack, using_packs_root
from pipeline.sessions.executors import ExecutionError, HttpExecutor
from tests.sessions.prism import PrismMock, prism_or_skip, servable

SHARED_DIR = Path(__file__).resolve().parents[3] / "shared"
SHARED = [*sorted((SHARED_DIR / "openapi").glob("*.yaml")),
          *[p for p in [SHARED_DIR / "benchmark" / "restbench" / "tmdb_oas.json"] if p.exists()]]
# A value of each type as a normaliser writes it, where the document shows none.
BY_FORMAT = {"date": "06/03/2026", "date-time": "2026-06-03T10:30:00Z", "uuid": "7d1c52a4-95be-4e6f-8f31-2a0b6c3e9f10",
             "email": "kim@example.org", "uri": "https://example.org/a.png", "url": "https://example.org/a.png"}
BY_KIND = {"integer": "7", "number": "2.5", "boolean": "true", "array": "first", "string": "some text"}


def _value(field: RequestField) -> str:
    if field.example:
        return field.example
    if field.enum:
        return field.enum[0]
    if field.default is not None:
        return field.default
    return BY_FORMAT.get(field.format) or BY_KIND[field.kind]


def _arguments(operation: Operation, binding) -> dict[str, str]:
    """The operation's required fields (and those the document shows a value for) by the pack's argument
    names, each with a value."""
    by_wire = {("query", w): a for w, a in binding.query.items()} | {("header", w): a for w, a in binding.headers.items()}
    by_wire |= {(where, w): a for w, a in binding.body.items() for where in ("body", "form")}
    wires = re.findall(r"{([^}]+)}", operation.path)
    by_wire |= {("path", w): a for w, a in zip(wires, re.findall(r"{([^}]+)}", binding.path))}
    return {by_wire[(f.location, f.wire)]: _value(f) for f in operation.fields
            if (f.required or f.example) and (f.location, f.wire) in by_wire}


def _misplaced(violation: str, operation: Operation) -> bool:
    """Prism's complaint about a path parameter the document declares and its path has no place for (a
    defect of the document, which the importer leaves out): no request could keep to it."""
    named = re.search(r"request\.path Request path must have required property '([^']+)'", violation)
    return named is not None and named[1].lower() not in operation.path.lower()


@pytest.mark.parametrize("spec", SHARED, ids=[s.stem for s in SHARED])
def test_every_operation_is_sent_as_its_document_says(spec, tmp_path, monkeypatch):
    prism_or_skip()
    server = PrismMock(servable(spec, tmp_path), tmp_path / "prism.log")
    try:
        _, written, document, _ = import_openapi(spec, tmp_path, base_url=server.url)
        for auth in [written.get("http_auth"), *written.get("http_auths", {}).values()]:
            if auth:  # any secret: Prism checks that the credentials are sent where the scheme says
                monkeypatch.setenv(auth["env"], "user:secret" if auth["scheme"] == "basic" else "secret-token")
        with using_packs_root(tmp_path):
            pack = load_pack(written["name"])
        executor = HttpExecutor(pack, session_id="wire", retries=0)
        apis_of, broken = api_names(document), []
        for operation in document.operations:
            api = apis_of[operation.key]
            server.mark()
            try:
                executor.call(api, _arguments(operation, pack.spec.apis[api].http))
            except ExecutionError:
                pass  # an answer without the field read from it: the answer is Prism's example, not the request
            sent = server.requests()
            assert len(sent) == 1 and sent[0][0] == operation.method, (api, sent)
            broken += [f"{api} ({operation.method} {operation.path}): {v}" for v in server.violations()
                       if not _misplaced(v, operation)]
        assert not broken, "\n".join(broken)
    finally:
        server.close()
