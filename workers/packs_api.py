"""Packs through the API: upload (an OpenAPI document, an SGD schema, a pack archive), list, activate,
roll back. Each key (tenant) sees its own packs and the installed, shared ones.

An upload is imported and validated in a process of its own (`pipeline.authoring.uploads`), under a time
and memory limit and a few at a time per API process: a hostile or huge upload costs that process, never
the API's, and nothing is stored unless every check passed.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import threading

from fastapi import APIRouter, Depends, HTTPException, Query, Request, Response
from pydantic import BaseModel, Field

from pipeline.packs.pack import NAME, PackError, pack_names
from pipeline.packs.store import PackStore, PackStoreError, PackVersion, default_store, stored_or_installed
from pipeline.packs.versions import PackFiles, archive_of, installed_digest, installed_files
from pipeline.settings import settings
from workers.auth import caller

router = APIRouter()
_imports = threading.BoundedSemaphore(2)  # uploads imported at once by this API process


class Problem(BaseModel):
    file: str = Field(description="the file inside the pack (pack.yaml, rules/x.lp, domain.pddl), or '' for "
                                  "the upload as a whole")
    line: int | None = None
    message: str


class Stored(BaseModel):
    packs: list[PackVersion]


class PackSummary(BaseModel):
    name: str
    shared: bool = Field(description="installed with the service, for every key (not stored per key)")
    active: str | None = Field(description="the digest new runs use")
    versions: int


class Activation(BaseModel):
    digest: str = Field(..., min_length=8, max_length=64, pattern="^[0-9a-f]+$",
                        description="a version's digest, or its first characters when they name one version")


def pack_store() -> PackStore:
    return default_store()


def resolve(who: str, domain: str) -> str:
    """The digest of the pack version a key's new run or session of `domain` uses; 404 when the key has
    no such pack and none is installed."""
    try:
        return stored_or_installed(pack_store(), who, domain)
    except PackError as exc:
        raise HTTPException(status_code=404 if "unknown domain" in str(exc) else 400, detail=str(exc))


def visible_domains(who: str) -> list[str]:
    """The domains a key may plan with: its own packs, then the installed ones."""
    return [*pack_store().names(who), *pack_names()]


def run_import(data: bytes, kind: str | None, name: str | None, services: list[str]) -> dict:
    """The upload imported and validated in its own process: {"packs": [...]} or {"problems": [...]}."""
    s = settings()
    args = [sys.executable, "-m", "pipeline.authoring.uploads"]
    args += [f"--kind={kind}"] * bool(kind) + [f"--name={name}"] * bool(name) + [f"--service={x}" for x in services]
    memory = s.pack_import_memory_mb * 1024 * 1024

    def limit_memory() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))

    try:
        done = subprocess.run(args, input=data, capture_output=True, timeout=s.pack_import_timeout_s,
                              preexec_fn=limit_memory)
    except subprocess.TimeoutExpired:
        return {"problems": [{"file": "", "line": None,
                              "message": f"importing it took over {s.pack_import_timeout_s:g} s"}]}
    try:
        return json.loads(done.stdout)
    except ValueError:
        last = (done.stderr.decode("utf-8", "replace").strip().splitlines() or ["no output"])[-1]
        return {"problems": [{"file": "", "line": None, "message": f"the import failed: {last[:300]}"}]}


@router.post("/v1/packs", status_code=201, response_model=Stored,
             responses={409: {"description": "the name is an installed pack's"},
                        422: {"description": "the upload makes no valid pack: every problem with its file and line"},
                        429: {"description": "uploads are being imported: try again shortly"}})
async def upload_pack(request: Request, who: str = Depends(caller),
                      kind: str | None = Query(None, pattern="^(openapi|sgd|archive)$",
                                               description="default: told from the bytes"),
                      name: str | None = Query(None, max_length=64, description="the pack's name (OpenAPI; default: "
                                                                               "the document's title)"),
                      service: list[str] = Query([], description="SGD: only these services"),
                      activate: bool = Query(True, description="make it the version new runs use")) -> Stored:
    """Upload an OpenAPI document, an SGD schema (JSON or YAML) or a pack archive (zip or tar.gz of
    pack.yaml, rules/*.lp, domain.pddl, prompts/, examples/) as the request body. Each pack it makes is
    validated and stored as a new version of the key's pack of that name."""
    import anyio

    data = await request.body()
    if not data:
        raise HTTPException(status_code=422, detail=[Problem(file="", message="the body is empty").model_dump()])
    if not _imports.acquire(blocking=False):
        raise HTTPException(status_code=429, detail="other uploads are being imported", headers={"Retry-After": "5"})
    try:
        result = await anyio.to_thread.run_sync(run_import, data, kind, name, service)
    finally:
        _imports.release()
    if "problems" in result:
        raise HTTPException(status_code=422, detail=[Problem(**p).model_dump() for p in result["problems"]])
    shared = set(pack_names())
    taken = [p["name"] for p in result["packs"] if p["name"] in shared]
    if taken:
        raise HTTPException(status_code=409, detail=f"{taken[0]!r} is an installed pack's name: give another "
                                                    f"(?name= for an OpenAPI document, or the archive's pack.yaml)")
    stored = []
    for pack in result["packs"]:
        files: PackFiles = {path: text.encode("utf-8") for path, text in pack["files"].items()}
        stored.append(pack_store().add(who, pack["name"], files, pack["source"], activate))
    return Stored(packs=stored)


@router.get("/v1/packs", response_model=list[PackSummary])
def list_packs(who: str = Depends(caller)) -> list[PackSummary]:
    """The packs this key may plan with: its own, then the installed ones."""
    store = pack_store()
    own = [PackSummary(name=n, shared=False, active=store.active(who, n), versions=len(store.versions(who, n)))
           for n in store.names(who)]
    return own + [PackSummary(name=n, shared=True, active=installed_digest(n), versions=1) for n in pack_names()]


def _own_versions(who: str, name: str) -> list[PackVersion]:
    versions = pack_store().versions(who, name) if NAME.fullmatch(name) else []
    if not versions:
        raise HTTPException(status_code=404, detail=f"no pack {name!r} of yours (installed packs have one "
                                                    f"version, their files)")
    return versions


@router.get("/v1/packs/{name}/versions", response_model=list[PackVersion], responses={404: {"description": "no such pack"}})
def list_versions(name: str, who: str = Depends(caller)) -> list[PackVersion]:
    """A pack's versions, oldest first; `active` marks the one new runs use."""
    if NAME.fullmatch(name) and name in pack_names() and not pack_store().versions(who, name):
        return [PackVersion(name=name, digest=installed_digest(name), created=0, source="installed", active=True)]
    return _own_versions(who, name)


@router.get("/v1/packs/{name}/versions/{digest}", response_class=Response,
            responses={200: {"content": {"application/gzip": {}}, "description": "the version's files (tar.gz)"},
                       404: {"description": "no such version"}})
def download_version(name: str, digest: str, who: str = Depends(caller)) -> Response:
    """A version's files as the archive `POST /v1/packs` takes: what made a run (its `pack_digest`), to
    read, audit or plan with again."""
    known = [v.digest for v in list_versions(name, who)]
    if digest not in known:
        raise HTTPException(status_code=404, detail=f"pack {name!r} has no version {digest!r}")
    files = installed_files(name) if name in pack_names() and installed_digest(name) == digest else \
        pack_store().files(digest)
    if files is None:
        raise HTTPException(status_code=404, detail=f"pack {name!r} version {digest[:12]} is no longer stored")
    return Response(archive_of(files), media_type="application/gzip",
                    headers={"Content-Disposition": f'attachment; filename="{name}-{digest[:12]}.tar.gz"'})


@router.delete("/v1/packs/{name}", status_code=204, response_class=Response, responses={404: {"description": "no such pack"}})
def delete_pack(name: str, who: str = Depends(caller)) -> Response:
    """Forget your pack: new runs cannot use it; runs and sessions already made on it finish on theirs."""
    _own_versions(who, name)
    pack_store().remove(who, name)
    return Response(status_code=204)


@router.post("/v1/packs/{name}/activate", response_model=PackVersion, responses={404: {"description": "no such version"}})
def activate_version(name: str, body: Activation, who: str = Depends(caller)) -> PackVersion:
    """Make one of the pack's versions the one new runs use (runs already made keep theirs)."""
    matches = [v.digest for v in _own_versions(who, name) if v.digest.startswith(body.digest)]
    if len(matches) != 1:
        raise HTTPException(status_code=404, detail=f"pack {name!r} has {'no' if not matches else 'more than one'} "
                                                    f"version {body.digest!r}")
    return pack_store().activate(who, name, matches[0])


@router.post("/v1/packs/{name}/rollback", response_model=PackVersion,
             responses={404: {"description": "no such pack"}, 409: {"description": "no earlier version was active"}})
def rollback_version(name: str, who: str = Depends(caller)) -> PackVersion:
    """Make active again the version that was active before the current one."""
    _own_versions(who, name)
    try:
        return pack_store().rollback(who, name)
    except PackStoreError as exc:
        raise HTTPException(status_code=409, detail=str(exc))
