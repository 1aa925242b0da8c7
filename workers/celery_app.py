"""The Celery app: broker and results in Redis, translation on queue `llm`, the rest on `symbolic`.

Tasks acknowledge late and are rejected back to the queue when their worker dies, so a killed worker
costs a retry, never a request; every stage is idempotent (a stage already in the Run record is skipped).
"""

from __future__ import annotations

from celery import Celery

from pipeline.settings import settings


def make_app() -> Celery:
    s = settings()
    app = Celery("nesyplan", broker=s.redis_url, backend=s.redis_url, include=["workers.tasks"])
    app.conf.update(
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        worker_prefetch_multiplier=1,
        task_default_queue="symbolic",
        task_routes={"nesyplan.translate": {"queue": "llm"}, "nesyplan.session_translate": {"queue": "llm"},
                     "nesyplan.*": {"queue": "symbolic"}},
        task_serializer="json",
        result_serializer="json",
        accept_content=["json"],
        # Nothing reads a task's return value (the Run record is the result): no write per task, and no
        # task that did its work failing after it because the result could not be stored.
        task_ignore_result=True,
        result_expires=3600,
        broker_connection_retry_on_startup=True,
        broker_transport_options={
            "visibility_timeout": s.visibility_timeout_s,
            "unacked_restore_interval": s.restore_interval_s,
            "unacked_restore_throttle": 1,
            "unacked_mutex_expire": s.restore_lock_s,
        },
        worker_hijack_root_logger=False,
    )
    return app


app = make_app()
