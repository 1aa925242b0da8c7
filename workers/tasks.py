"""One Celery task per stage; a request is a sequence of them over its Run record in the store, each stage
sending the next. A session's turn is two: its translation (queue `llm`), which sends its symbolic half
(plan and carry out)."""

from __future__ import annotations

import logging
import os
import threading
import time
import uuid

import redis
from celery import current_task
from celery.signals import task_received, worker_process_init, worker_process_shutdown, worker_ready
from celery.exceptions import SoftTimeLimitExceeded

from pipeline.observability import metrics, tracing
from pipeline.records import Failure, Run
from pipeline.run import ALL_STAGES, run_stage, stages_of, warm_up
from pipeline.settings import settings
from workers.celery_app import app
from pipeline.sessions.engine import SessionEngine
from workers import sweeper
from workers.store import RunStore, SessionStore, beat

log = logging.getLogger(__name__)
_store: RunStore | None = None
_sessions: SessionStore | None = None
TURN_WAIT_S = 0.1           # a turn whose earlier turn is still running looks again after this long
WORKER_QUEUES_ENV = "NESYPLAN_WORKER_QUEUES"  # set by `nesyplan worker`: what this worker's processes serve
# This start of the worker: its heartbeat carries it and its tasks' holds name it (workers/sweeper.py).
# Set before the pool's processes are made, so they all share the main process's.
INSTANCE = os.environ.setdefault("NESYPLAN_WORKER_INSTANCE", uuid.uuid4().hex)

# Transient: the store or broker went away for a moment. Domain errors never raise (they end the run).
TRANSIENT = (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError)


def store() -> RunStore:
    global _store
    if _store is None:
        _store = RunStore()
    return _store


def session_store() -> SessionStore:
    global _sessions
    if _sessions is None:
        _sessions = SessionStore()
    return _sessions


@worker_ready.connect
def _start_heartbeat(sender=None, **_) -> None:
    """The worker's main process says it is alive every heartbeat_s seconds (what /healthz counts); a
    killed worker's word runs out by itself."""
    name, s = getattr(sender, "hostname", None) or f"worker-{os.getpid()}", settings()

    def keep_beating() -> None:
        client, redis_run, away = store().client, None, False
        while True:
            try:
                beat(client, name, INSTANCE, s.heartbeat_s * 3)
                now_run = _redis_run(client)  # another one: Redis restarted since the last beat
                if away or redis_run not in (None, now_run):
                    lost = sweeper.lose_holds_of(client, name, INSTANCE)
                    log.warning("Redis was away: %d item(s) this worker held are to be sent again", lost)
                redis_run, away = now_run, False
            except redis.exceptions.RedisError:
                away = True  # no word until it is back, which is the truth
            time.sleep(s.heartbeat_s)

    threading.Thread(target=keep_beating, name="nesyplan-heartbeat", daemon=True).start()

    def keep_sweeping() -> None:
        while True:
            time.sleep(s.sweep_interval_s)
            try:
                with app.connection_for_write() as connection:
                    sweeper.sweep_if_first(store(), session_store(), resend_run, resend_turn,
                                           connection.default_channel)
            except Exception:  # noqa: BLE001 - Redis away, or a bad record: the next sweep tries again
                log.exception("sweep failed")

    threading.Thread(target=keep_sweeping, name="nesyplan-sweeper", daemon=True).start()


def _redis_run(client: redis.Redis) -> str | None:
    try:
        return client.info("server").get("run_id")
    except redis.exceptions.ResponseError:  # INFO refused (some managed Redis): only failed beats tell
        return None


@worker_process_init.connect
def _start_tracing(**_) -> None:
    """Each worker process exports its stages' spans when tracing is configured (after the fork: the
    exporter's thread is the process's own)."""
    try:
        tracing.configure("nesyplan-worker")
    except Exception:  # noqa: BLE001 - a worker whose tracing is misconfigured still serves
        log.exception("tracing could not be configured; spans are not exported")


@worker_process_shutdown.connect
def _flush_spans(**_) -> None:
    tracing.flush()


@worker_process_init.connect
def _warm_up_worker(**_) -> None:
    """Each worker process loads its packs (and, on the `llm` queue, the model) before its first task."""
    s = settings()
    domains = [d.strip() for d in s.warm_up_domains.split(",") if d.strip()]
    queues = os.environ.get(WORKER_QUEUES_ENV, "llm,symbolic").split(",")
    try:
        took = warm_up(domains, s.translator if "llm" in queues else None)
        log.info("warmed up in %.1f s: %s", sum(took.values()), {k: round(v, 2) for k, v in took.items()})
    except Exception:  # noqa: BLE001 - a worker that cannot warm up still serves (and reports) each request
        log.exception("warm-up failed; requests will load what they need")


def _holder(hostname: str | None, task_id: str, retries: int) -> str:
    return sweeper.holder(hostname or f"worker-{os.getpid()}", INSTANCE, task_id, retries)


def _holding(item: str):
    """The running task holds `item` under this worker's name, for the sweeper to find if it dies."""
    request = current_task.request
    return sweeper.holding(store().client, item, _holder(request.hostname, request.id, request.retries or 0))


def _item_of(task_name: str, args: list) -> str | None:
    """What a task message carries: a run's stage, or a half of a session's turn."""
    if task_name in ("nesyplan.session_translate", "nesyplan.session_advance"):
        return f"turn:{args[0]}:{args[1]}"
    return f"run:{args[0]}" if task_name.startswith("nesyplan.") and args else None


@task_received.connect
def _hold_on_receipt(request=None, **_) -> None:
    """A message is held from the moment this worker takes it, not only once a process runs it: a worker
    killed in between would otherwise leave it to the broker's redelivery, minutes away."""
    try:
        item = _item_of(request.name, list(request.args))
        if item:
            sweeper.hold(store().client, item,
                         _holder(request.hostname, request.id, request.request_dict.get("retries") or 0))
    except Exception:  # noqa: BLE001 - the task's own hold, when it runs, is the one that must hold
        log.exception("could not record the hold of %s", getattr(request, "id", "?"))


def execute_stage(run_id: str, stage: str) -> str:
    """Run one stage of a stored run, store the result and send the run's next stage. Idempotent: a
    redelivered message for a stage that already ran, or a run that already ended, changes nothing.

    The next stage is sent here, under the hold, not by a Celery chain after the task returns: a chain's
    next message that cannot be published (Redis away) is dropped with nobody the wiser, while a send that
    fails here fails the task, and its item is marked lost and sent again (workers/sweeper.py)."""
    with _holding(f"run:{run_id}"):
        run = _execute_stage(run_id, stage)
        left = sweeper.stages_left(run) if run is not None else []
        if left:
            STAGE_TASKS[left[0]].apply_async((run_id,))
    return run_id


def _execute_stage(run_id: str, stage: str) -> Run | None:
    """The stored run once the stage has run, or None when there was nothing to do."""
    run = store().load(run_id)
    if run is None:
        log.error("run %s is not in the store (expired?): stage %s skipped", run_id, stage)
        return None
    if run.status in ("succeeded", "failed") or stage in run.timings_ms:
        return None
    try:
        run_stage(run, stage)
    except SoftTimeLimitExceeded:
        run.status = "failed"
        run.failure = Failure(stage=stage, kind="internal", message=f"stage {stage} ran out of time")
        metrics.run_ended(run, stage)
    store().save(run)
    if run.status in ("succeeded", "failed"):
        sweeper.ended(store().client, run_id)
    else:
        sweeper.moved(store().client, run_id)
    return run


def _make_stage_task(stage: str):
    limit = settings().stage_time_limit_s * (3 if stage == "translate" else 1)

    @app.task(name=f"nesyplan.{stage}", autoretry_for=TRANSIENT, retry_backoff=True, retry_backoff_max=30,
              max_retries=8, soft_time_limit=limit, time_limit=limit + 10)
    def stage_task(run_id: str) -> str:
        return execute_stage(run_id, stage)

    return stage_task


STAGE_TASKS = {stage: _make_stage_task(stage) for stage in ALL_STAGES}


def enqueue(run: Run) -> None:
    """Store the run as queued and send its first stage (translation on `llm`, the rest on `symbolic`);
    each stage sends the next. The run's trace starts here: its context is stored with it, for the stages."""
    with tracing.run_span(run, "queue"):
        store().save(run)
        sweeper.moved(store().client, run.id)  # tracked before it is sent: a send that is lost is sent again
        resend_run(run.id, stages_of(run))
    metrics.run_submitted()


def _engine() -> SessionEngine:
    return SessionEngine(settings().translator)


@app.task(name="nesyplan.session_translate", bind=True, autoretry_for=TRANSIENT, retry_backoff=True,
          retry_backoff_max=30, max_retries=8, soft_time_limit=settings().stage_time_limit_s * 3,
          time_limit=settings().stage_time_limit_s * 3 + 10)
def session_translate(self, session_id: str, turn: int) -> None:
    """The LLM half of a turn, which then sends the symbolic half. It waits for the turn before it: the
    question that turn asks is this message's context, so two messages sent at once are read one after the
    other, never interleaved."""
    with _holding(f"turn:{session_id}:{turn}"):
        if _session_translate(self, session_id, turn):
            session_advance.apply_async((session_id, turn))  # under the hold, as a run's next stage is


def _session_translate(self, session_id: str, turn: int) -> bool:
    """Whether the turn's translation is stored and its symbolic half is to be sent."""
    sessions = session_store()
    state = sessions.load(session_id)
    if state is None:
        log.error("session %s is not in the store (expired?): turn %d skipped", session_id, turn)
        return False
    if len(state.turns) > turn:
        return False  # a redelivered message: the turn is written
    if sessions.load_translation(session_id, turn) is not None:
        return True  # translated, but its second half may never have been sent
    if len(state.turns) < turn:
        raise self.retry(countdown=TURN_WAIT_S, max_retries=None)  # as long as the turn before takes
    sessions.save_translation(session_id, _engine().translate(state, sessions.message(session_id, turn)))
    return True


@app.task(name="nesyplan.session_advance", autoretry_for=TRANSIENT, retry_backoff=True, retry_backoff_max=30,
          max_retries=8, soft_time_limit=settings().stage_time_limit_s * 2,
          time_limit=settings().stage_time_limit_s * 2 + 10)
def session_advance(session_id: str, turn: int) -> None:
    """The symbolic half: apply, plan, carry out; the state and the turn's Run are stored together."""
    with _holding(f"turn:{session_id}:{turn}"):
        _session_advance(session_id, turn)


def _session_advance(session_id: str, turn: int) -> None:
    sessions = session_store()
    with sessions.lock(session_id):
        state = sessions.load(session_id)
        if state is None or len(state.turns) > turn:
            return
        turn_input = sessions.load_translation(session_id, turn)
        if turn_input is None:
            log.error("session %s: turn %d has no translation", session_id, turn)
            return
        _, run = _engine().advance(state, turn_input)
        if run is not None:
            run.owner = state.owner  # a turn's Run is read with the session's key
            store().save(run)
        sessions.save(state)
        sessions.drop_translation(session_id, turn)
        sweeper.turn_ended(sessions.client, session_id, turn)


def enqueue_message(session_id: str, message: str, limit: int = 0) -> int | None:
    """Queue a user message of a session; its turn number, or None when the session has had `limit`
    messages (0: no limit)."""
    turn = session_store().post(session_id, message, limit)
    if turn is not None:
        sweeper.turn_moved(session_store().client, session_id, turn)
        resend_turn(session_id, turn)
    return turn


def resend_run(run_id: str, stages: list[str]) -> None:
    """Send the first of the stages a run has left (again, for the sweeper); each stage sends the next."""
    if stages:
        STAGE_TASKS[stages[0]].apply_async((run_id,))


def resend_turn(session_id: str, turn: int) -> None:
    """Send a turn's first half (again, for the sweeper: each half skips what is already done and sends
    the second)."""
    session_translate.apply_async((session_id, turn))
