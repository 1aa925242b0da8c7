"""`nesyplan rest-corpus`: requests written to REST APIs, paired with the operations their calls name in
each API's imported pack, for the learned parts to train on (`language.rest_corpus`)."""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

import yaml

from pipeline.authoring.openapi_packs import api_names, import_openapi
from pipeline.authoring.writer import PackNotValid
from pipeline.language.descriptions import pack_goal_texts
from pipeline.language.rest_corpus import RestCorpus, RestRequest
from pipeline.packs.openapi_spec import METHODS, OpenApiError, load_document
from pipeline.packs.pack import load_pack_at

_METHOD_PATH = re.compile(r"([A-Z]+)\s+(/\S*)")


def corpus_from(documents: Path, requests: Path) -> tuple[RestCorpus, list[str]]:
    """Import each document a request file names (`<documents>/<api>.<yaml|yml|json>`) and pair its
    requests with the goals their calls name; and what was left out, in words. A call is "METHOD /path" as
    the document writes it, or the imported pack's name of the operation. A document the importer refuses
    is left out, as is a request needing an operation the import left out; a call the document does not
    have at all is an error: a request must not be paired with the wrong operations."""
    raw = yaml.safe_load(requests.read_text(encoding="utf-8")) or {}
    corpus, left_out = RestCorpus(), []
    with tempfile.TemporaryDirectory() as root:
        for api, cases in (raw.get("specs") or {}).items():
            found = [p for p in sorted(documents.glob(f"{api}.*")) if p.suffix in (".yaml", ".yml", ".json")]
            if not found:
                raise ValueError(f"{requests}: no document {api}.yaml, .yml or .json in {documents}")
            document = load_document(found[0])
            try:
                import_openapi(found[0], Path(root), api)
            except (OpenApiError, PackNotValid) as exc:
                left_out.append(f"{api}: not imported ({str(exc)[:200]})")
                continue
            pack = load_pack_at(Path(root), api)
            words = pack_goal_texts(pack)
            goal_of_api = {pack.spec.goals[g].api: g for g in words}
            names = api_names(document)
            by_call = {g: g for g in words}
            in_document = _written_calls(found[0])
            for operation in document.operations:
                key = f"{operation.method.upper()} {operation.path}"
                in_document.update({key, names[operation.key]})
                if names[operation.key] in goal_of_api:
                    by_call[key] = goal_of_api[names[operation.key]]
            for case in cases:
                keys = []
                for call in case.get("calls") or []:
                    m = _METHOD_PATH.fullmatch(call.strip())
                    keys.append(f"{m.group(1)} {m.group(2)}" if m else call.strip())
                unknown = [k for k in keys if k not in in_document and k not in by_call]
                if unknown:
                    raise ValueError(f"{requests}: {api}: no operation {unknown[0]!r} in the document")
                if any(k not in by_call for k in keys):
                    left_out.append(f"{api}: {case['request']!r} needs an operation the import left out")
                    continue
                values = {str(k): str(v) for k, v in (case.get("values") or {}).items()}
                missing = [v for v in values.values() if v not in case["request"]]
                if missing:
                    raise ValueError(f"{requests}: {api}: {missing[0]!r} is not written in {case['request']!r}")
                corpus.requests.append(RestRequest(api, case["request"], [by_call[k] for k in keys], values))
            corpus.goals[api] = words
    return corpus, left_out


def _written_calls(document: Path) -> set[str]:
    """Every "METHOD /path" the document writes, read or not by the importer (an upload it leaves out)."""
    raw = yaml.safe_load(document.read_text(encoding="utf-8")) or {}
    return {f"{method.upper()} {path}" for path, item in (raw.get("paths") or {}).items() if isinstance(item, dict)
            for method in item if method in METHODS}
