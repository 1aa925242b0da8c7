"""GET /metrics: Prometheus' view of the service (pipeline/observability/metrics.py counts; this adds what
is read from Redis when scraped: the queues' depth, the workers alive, whether Redis answers).

On a host where `nesyplan serve` and `nesyplan worker` share their metrics folder, the API's /metrics has
what this host's workers did; a worker on another host serves its own (`nesyplan worker --metrics-port`).
Keys: as every /v1 endpoint when keys are configured (Prometheus: `authorization` in its scrape config),
but served with Redis down, which is when it is most wanted.
"""

from __future__ import annotations

import redis
from fastapi import APIRouter, Depends, HTTPException, Request, Response
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from kombu.transport.redis import PRIORITY_STEPS, Channel
from prometheus_client.core import GaugeMetricFamily

from pipeline.observability.metrics import exposition
from workers.auth import LOCAL, caller, key_digests, key_id
from workers.celery_app import app as celery_app
from workers.store import live_workers

router = APIRouter()
_bearer = HTTPBearer(auto_error=False)


def queues() -> list[str]:
    """The Celery queues tasks are routed to."""
    routed = {route["queue"] for route in celery_app.conf.task_routes.values()}
    return sorted(routed | {celery_app.conf.task_default_queue})


def queue_keys(queue: str) -> list[str]:
    """The Redis lists that hold a queue's waiting messages (kombu's: one per priority step)."""
    options = celery_app.conf.broker_transport_options or {}
    prefix, steps = options.get("global_keyprefix", ""), options.get("priority_steps", PRIORITY_STEPS)
    return [f"{prefix}{queue}{Channel.sep}{step}" if step else f"{prefix}{queue}" for step in steps]


class RedisCollector:
    """Gauges read from Redis at scrape time (one round trip)."""

    def __init__(self, client: redis.Redis):
        self.client = client

    def collect(self):
        up = GaugeMetricFamily("nesyplan_redis_up", "Whether Redis (broker and run store) answered this scrape")
        names = queues()
        try:
            with self.client.pipeline(transaction=False) as pipe:
                for queue in names:
                    for key in queue_keys(queue):
                        pipe.llen(key)
                lengths = pipe.execute()
            alive = live_workers(self.client)
        except redis.exceptions.RedisError:
            up.add_metric([], 0)
            yield up
            return
        up.add_metric([], 1)
        yield up
        depth = GaugeMetricFamily("nesyplan_queue_depth", "Messages waiting in a Celery queue (taken ones not "
                                  "counted)", labels=["queue"])
        per_queue = len(lengths) // len(names)
        for i, queue in enumerate(names):
            depth.add_metric([queue], sum(lengths[i * per_queue:(i + 1) * per_queue]))
        yield depth
        yield GaugeMetricFamily("nesyplan_workers_alive", "Workers whose heartbeat is current", value=alive)


def scraper(request: Request, credentials: HTTPAuthorizationCredentials | None = Depends(_bearer)) -> str:
    """The caller as for /v1 (key, failed keys, rate); with Redis away, a valid key alone (or no keys)."""
    try:
        return caller(request, credentials)
    except redis.exceptions.RedisError:
        if not key_digests():
            return LOCAL
        who = key_id(credentials.credentials) if credentials is not None else None
        if who is None:
            raise HTTPException(status_code=401, detail="a valid API key is required (Authorization: Bearer KEY)",
                                headers={"WWW-Authenticate": "Bearer"})
        return who


@router.get("/metrics", include_in_schema=False)
def metrics(request: Request, _who: str = Depends(scraper)) -> Response:
    from workers.tasks import store

    body, content_type = exposition(request.headers.get("accept"), RedisCollector(store().client))
    return Response(content=body, media_type=content_type)
