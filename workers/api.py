"""HTTP API (FastAPI; OpenAPI at /docs): submit requests, follow them, read every artifact."""

from __future__ import annotations

import logging
import threading
import time
from datetime import date
from typing import Literal

import anyio
import redis
from fastapi import Depends, FastAPI, HTTPException, Request
from fastapi.middleware.trustedhost import TrustedHostMiddleware
from fastapi.responses import JSONResponse, PlainTextResponse
from pydantic import BaseModel, Field

from pipeline.packs.pack import PackError
from pipeline.packs.store import load_pack_version, stored_or_installed
from pipeline.records import Run
from pipeline.run import new_run
from pipeline.sessions.executors import EXECUTORS
from pipeline.sessions.records import Reply, SessionState
from pipeline.settings import settings
from pipeline.stages.check import MAX_IR_CHARS
from workers.artifacts import ARTIFACTS
from workers.auth import LOCAL, BodyLimit, SecurityHeaders, address, allowed_hosts, caller, rate_limit
from workers.packs_api import pack_store, resolve, router as packs_router, visible_domains
from workers.store import capped_add, live_workers

class ErrorBody(BaseModel):
    detail: str | list = Field(description="what was wrong (a list of field errors for a 422)")


# Every status an endpoint can answer is in the OpenAPI document, with why (schemathesis checks it).
WHY = {400: "a malformed request: a Host we do not serve, a body that is not text, an unknown translator",
       401: "no valid API key (keys are configured)",
       404: "no such run, session, artifact or domain (unknown, or expired from the store)",
       409: "the session has ended, or has had all its messages",
       413: "the request body is over NESYPLAN_MAX_BODY_BYTES",
       429: "a rate, a cap or failed keys: wait for Retry-After",
       431: "request headers over 16 KiB",
       503: "the store (Redis) is unavailable, or no worker is alive (/healthz)",
       504: "the turn is still running: its reply will be in GET /v1/sessions/{id}"}


def errors(*codes: int) -> dict:
    return {code: {"model": ErrorBody, "description": WHY[code]} for code in codes}


app = FastAPI(title="nesyplan", version="0.1.0", responses=errors(400, 401, 413, 429, 431, 503),
              description="Plain-language requests -> inspectable plans of API calls. Every /v1 endpoint "
                          "takes `Authorization: Bearer KEY` when keys are configured.")
app.add_middleware(BodyLimit, max_bytes=settings().max_body_bytes,
                   larger={"/v1/packs": settings().max_pack_bytes})
app.add_middleware(SecurityHeaders)
# A request naming a host we do not serve (DNS rebinding, a forged Host) is refused before anything runs.
app.add_middleware(TrustedHostMiddleware, allowed_hosts=allowed_hosts())
app.include_router(packs_router)
log = logging.getLogger(__name__)
ACTIVE_PREFIX = "nesyplan:admitted:"  # per key: the runs it submitted that have not ended, by admission time
ADMISSION_S = 60  # a run admitted longer ago than this and still not stored was never accepted


class PlanRequest(BaseModel):
    query: str = Field(..., min_length=1, max_length=4000, description="the request, in plain language")
    domain: str = Field("quickbooks", max_length=100)
    today: date | None = Field(None, description="resolves relative dates; default: the server's today")
    translator: str | None = Field(None, max_length=50, description="LLM backend for translation")
    ir: str | None = Field(None, max_length=MAX_IR_CHARS, description="IR facts: skips translation")


TRANSLATORS = ("hf", "openai")


class Submitted(BaseModel):
    id: str
    status: Literal["queued"] = "queued"


def _store():
    from workers.tasks import store

    return store()


def _sessions():
    from workers.tasks import session_store

    return session_store()


def _pack_version(domain: str, who: str) -> str:
    """The digest of the pack version a key's new run or session of `domain` uses, loaded once here so
    that a pack that does not load is refused now, not at its first stage."""
    digest = resolve(who, domain)
    try:
        load_pack_version(domain, digest)
    except PackError as exc:
        raise HTTPException(status_code=400, detail=str(exc))
    return digest


@app.exception_handler(redis.exceptions.RedisError)
async def redis_unavailable(_request: Request, exc: redis.exceptions.RedisError) -> JSONResponse:
    log.warning("Redis unavailable: %s", exc)  # the address and the reason stay in the log, not the answer
    return JSONResponse(status_code=503, content={"detail": "the run store (Redis) is unavailable; try again shortly"},
                        headers={"Retry-After": "5"})


def _admit_run(who: str, run_id: str) -> None:
    """Count the run among the key's runs not yet ended, or 429 when max_queued_runs are (ended ones are
    pruned only then). Checked and counted in one step: concurrent submits cannot all pass."""
    client, key, limit, ttl = _store().client, ACTIVE_PREFIX + who, settings().max_queued_runs, settings().run_ttl_s
    if capped_add(client, key, run_id, limit, ttl):
        return
    admitted_before = time.time() - ADMISSION_S
    for active, when in client.zrange(key, 0, -1, withscores=True):
        run = _store().load(active.decode())
        # A run admitted a moment ago may not be stored yet (another request between its admission and its
        # save): only a record that ended, or one still missing long after its admission, frees a place.
        if (run is not None and run.status in ("succeeded", "failed")) or (run is None and when < admitted_before):
            client.zrem(key, active)
    if not capped_add(client, key, run_id, limit, ttl):
        raise HTTPException(status_code=429, detail=f"{limit} runs of this key are still queued or running",
                            headers={"Retry-After": "5"})


def submit(body: PlanRequest, who: str) -> Run:
    """Queue a request for a key (the endpoint's and the web form's way in)."""
    from workers.tasks import enqueue

    digest = _pack_version(body.domain, who)
    if body.translator is not None and body.translator not in TRANSLATORS:
        raise HTTPException(status_code=400, detail=f"unknown translator {body.translator!r} "
                                                    f"(available: {', '.join(TRANSLATORS)})")
    run = new_run(body.query, body.domain, body.today.isoformat() if body.today else None, body.ir,
                  translator=body.translator, pack_digest=digest)
    run.owner = who
    _admit_run(who, run.id)
    try:
        enqueue(run)
    except BaseException:
        _store().client.zrem(ACTIVE_PREFIX + who, run.id)  # not accepted: it takes no place
        raise
    _store().index(who, run.id)
    return run


@app.post("/v1/plans", status_code=202, response_model=Submitted, responses=errors(404))
def submit_plan(body: PlanRequest, who: str = Depends(caller)) -> Submitted:
    return Submitted(id=submit(body, who).id)


def get_owned_run(run_id: str, who: str) -> Run:
    if not run_id.isalnum() or len(run_id) > 64:
        raise HTTPException(status_code=404, detail=f"no run {run_id!r}")
    run = _store().load(run_id)
    if run is None or (run.owner or LOCAL) != who:  # another key's run is no run of yours (CLI runs: local)
        raise HTTPException(status_code=404, detail=f"no run {run_id!r} (unknown, or expired from the store)")
    return run


@app.get("/v1/plans/{run_id}", response_model=Run, responses=errors(404))
def get_plan(run_id: str, who: str = Depends(caller)) -> Run:
    return get_owned_run(run_id, who)


@app.get("/v1/plans/{run_id}/artifacts/{name}", response_class=PlainTextResponse, responses=errors(404))
def get_artifact(run_id: str, name: str, who: str = Depends(caller)) -> str:
    return owned_artifact(run_id, name, who)


def owned_artifact(run_id: str, name: str, who: str) -> str:
    """One raw artifact of a key's run (the API's endpoint and the web page's downloads); 404 otherwise."""
    if name not in ARTIFACTS:
        raise HTTPException(status_code=404, detail=f"no artifact {name!r} (artifacts: {', '.join(ARTIFACTS)})")
    content = ARTIFACTS[name](get_owned_run(run_id, who))
    if content is None:
        raise HTTPException(status_code=404, detail=f"run {run_id} has no {name} (yet, or its run ended before)")
    return content


class SessionRequest(BaseModel):
    domain: str = Field("quickbooks", max_length=100)
    today: date | None = Field(None, description="resolves relative dates; default: the server's today")
    executor: Literal[tuple(EXECUTORS)] | None = Field(None, description="how the APIs are called; default: "
                                                                        "NESYPLAN_SESSION_EXECUTOR")


class Opened(BaseModel):
    id: str


class Message(BaseModel):
    text: str = Field(..., min_length=1, max_length=4000, description="the user's message")


class SessionView(BaseModel):
    state: SessionState = Field(description="goals and values given, executed calls, the transcript")
    queued: int = Field(description="messages received, answered or not")
    runs: dict[str, Run] = Field(description="each turn's Run (its IR, materialized atoms, PDDL and plan)")


@app.post("/v1/sessions", status_code=201, response_model=Opened, responses=errors(404))
def open_session(body: SessionRequest, who: str = Depends(caller)) -> Opened:
    """Open a conversation; its messages go to POST /v1/sessions/{id}/messages."""
    digest = _pack_version(body.domain, who)
    state = SessionState(domain=body.domain, pack_digest=digest, today=(body.today or date.today()).isoformat(),
                         executor=body.executor or settings().session_executor, owner=who)
    _sessions().save(state)
    _sessions().index(who, state.id)
    return Opened(id=state.id)


def get_owned_session(session_id: str, who: str) -> SessionState:
    state = _sessions().load(session_id) if session_id.isalnum() and len(session_id) <= 64 else None
    if state is None or (state.owner or LOCAL) != who:
        raise HTTPException(status_code=404, detail=f"no session {session_id!r} (unknown, or expired)")
    return state


class Accepted(BaseModel):
    turn: int = Field(description="the message's turn: its reply is state.turns[turn].reply once it has run")
    poll: str = Field(description="where the reply will be")


class WaitSlots:
    """How many replies each key is waiting for in this process. A wait holds one of the server's worker
    threads, so one key's burst of messages must not hold them all: past `max_waits_per_key` its messages
    are taken and answered 202 at once, to poll."""

    def __init__(self):
        self._lock = threading.Lock()
        self._held: dict[str, int] = {}

    def take(self, who: str) -> bool:
        with self._lock:
            if self._held.get(who, 0) >= settings().max_waits_per_key:
                return False
            self._held[who] = self._held.get(who, 0) + 1
            return True

    def give_back(self, who: str) -> None:
        with self._lock:
            self._held[who] -= 1
            if not self._held[who]:
                del self._held[who]


_waits = WaitSlots()


@app.post("/v1/sessions/{session_id}/messages", response_model=Reply, response_model_exclude_none=True,
          responses={202: {"model": Accepted, "description": "taken, not waited for: this key already waits for "
                                                              "NESYPLAN_MAX_WAITS_PER_KEY replies; poll for it"},
                     **errors(404, 409, 504)})
def post_message(session_id: str, body: Message, who: str = Depends(caller)):
    """One user message; the agent's reply once its turn has run. Messages sent at once are answered in
    the order they arrived, each in the context the one before left."""
    from workers.tasks import enqueue_message

    if get_owned_session(session_id, who).ended:
        raise HTTPException(status_code=409, detail=f"session {session_id} has ended")
    turn = enqueue_message(session_id, body.text, settings().max_session_messages)
    if turn is None:
        raise HTTPException(status_code=409, detail=f"session {session_id} has had its "
                                                    f"{settings().max_session_messages} messages")
    if not _waits.take(who):
        poll = f"/v1/sessions/{session_id}"
        return JSONResponse(status_code=202, content=Accepted(turn=turn, poll=poll).model_dump(),
                            headers={"Location": poll})
    try:
        return _wait_for_reply(session_id, turn)
    finally:
        _waits.give_back(who)


def _wait_for_reply(session_id: str, turn: int) -> Reply:
    deadline = time.monotonic() + settings().session_reply_timeout_s
    while True:
        state = _sessions().load(session_id)
        if state is not None and len(state.turns) > turn:
            return state.turns[turn].reply
        left = deadline - time.monotonic()
        if left <= 0:
            break
        _sessions().wait_answered(session_id, turn, min(left, 1.0))  # woken when the turn is written
    raise HTTPException(status_code=504, detail=f"turn {turn} is still running: GET /v1/sessions/{session_id} "
                                                f"shows its reply when it is done")


@app.get("/v1/sessions/{session_id}", response_model=SessionView, responses=errors(404))
def get_session(session_id: str, who: str = Depends(caller)) -> SessionView:
    state = get_owned_session(session_id, who)
    runs = {turn.run_id: _store().load(turn.run_id) for turn in state.turns if turn.run_id}
    return SessionView(state=state, queued=_sessions().queued(session_id),
                       runs={run_id: run for run_id, run in runs.items() if run is not None})


@app.get("/v1/domains")
def list_domains(who: str = Depends(caller)) -> list[dict]:
    """The domains this key may plan with: its own packs (their active versions), then the installed ones."""
    store, domains = pack_store(), []
    for name in visible_domains(who):
        try:
            spec = load_pack_version(name, stored_or_installed(store, who, name)).spec
            domains.append({"name": name, "description": spec.description, "goals": list(spec.goals)})
        except PackError as exc:
            domains.append({"name": name, "error": str(exc)})
    return domains


@app.get("/livez")
def livez() -> dict:
    """Liveness: the API process answers (it touches nothing else)."""
    return {"ok": True}


_health_threads: anyio.CapacityLimiter | None = None


@app.get("/healthz")
async def healthz(request: Request) -> JSONResponse:
    """Readiness: Redis answers and some worker said it was alive lately (its heartbeat in Redis; no
    broadcast to the workers per call). Limited per client address like any other endpoint; it names no
    worker and no address. Its checks run on at most 4 threads of their own, so a storm of health checks
    waits on itself and never holds the threads every other endpoint runs on."""
    global _health_threads
    if _health_threads is None:
        _health_threads = anyio.CapacityLimiter(4)
    return await anyio.to_thread.run_sync(_readiness, address(request), limiter=_health_threads)


def _readiness(client_address: str) -> JSONResponse:
    rate_limit(f"health:{client_address}")
    try:
        client = _store().client
        up, workers = bool(client.ping()), live_workers(client)
    except redis.exceptions.RedisError:
        up, workers = False, 0
    healthy = up and workers > 0
    return JSONResponse(status_code=200 if healthy else 503, content={"ok": healthy, "redis": up, "workers": workers})
