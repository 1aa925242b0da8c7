"""The Run store: every Run record in Redis, written after every stage, kept for a TTL."""

from __future__ import annotations

import redis

from pipeline.records import Run
from pipeline.settings import settings

KEY_PREFIX = "nesyplan:run:"


class RunStore:
    def __init__(self, url: str | None = None, ttl_s: int | None = None):
        self.client = redis.Redis.from_url(url or settings().redis_url, socket_connect_timeout=2,
                                           socket_timeout=5, health_check_interval=10)
        self.ttl_s = ttl_s or settings().run_ttl_s

    def save(self, run: Run) -> None:
        self.client.set(KEY_PREFIX + run.id, run.model_dump_json(), ex=self.ttl_s)

    def load(self, run_id: str) -> Run | None:
        data = self.client.get(KEY_PREFIX + run_id)
        return Run.model_validate_json(data) if data else None

    def ping(self) -> bool:
        return bool(self.client.ping())
