"""One Celery task per stage; a request is a chain of them over its Run record in the store."""

from __future__ import annotations

import logging
import os

import redis
from celery import chain
from celery.signals import worker_process_init
from celery.exceptions import SoftTimeLimitExceeded

from pipeline.records import Failure, Run
from pipeline.run import ALL_STAGES, run_stage, stages_of, warm_up
from pipeline.settings import settings
from workers.celery_app import app
from workers.store import RunStore

log = logging.getLogger(__name__)
_store: RunStore | None = None
WORKER_QUEUES_ENV = "NESYPLAN_WORKER_QUEUES"  # set by `nesyplan worker`: what this worker's processes serve

# Transient: the store or broker went away for a moment. Domain errors never raise (they end the run).
TRANSIENT = (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError)


def store() -> RunStore:
    global _store
    if _store is None:
        _store = RunStore()
    return _store


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


def execute_stage(run_id: str, stage: str) -> str:
    """Run one stage of a stored run and store the result. Idempotent: a redelivered message for a stage
    that already ran, or a run that already ended, changes nothing."""
    run = store().load(run_id)
    if run is None:
        log.error("run %s is not in the store (expired?): stage %s skipped", run_id, stage)
        return run_id
    if run.status in ("succeeded", "failed") or stage in run.timings_ms:
        return run_id
    try:
        run_stage(run, stage)
    except SoftTimeLimitExceeded:
        run.status = "failed"
        run.failure = Failure(stage=stage, kind="internal", message=f"stage {stage} ran out of time")
    store().save(run)
    return run_id


def _make_stage_task(stage: str):
    limit = settings().stage_time_limit_s * (3 if stage == "translate" else 1)

    @app.task(name=f"nesyplan.{stage}", autoretry_for=TRANSIENT, retry_backoff=True, retry_backoff_max=30,
              max_retries=8, soft_time_limit=limit, time_limit=limit + 10)
    def stage_task(run_id: str) -> str:
        return execute_stage(run_id, stage)

    return stage_task


STAGE_TASKS = {stage: _make_stage_task(stage) for stage in ALL_STAGES}


def enqueue(run: Run) -> None:
    """Store the run as queued and send its chain of stages (translation on `llm`, the rest `symbolic`)."""
    store().save(run)
    chain(*(STAGE_TASKS[stage].si(run.id) for stage in stages_of(run))).apply_async()
