import os

import pytest
import redis

from tests.harness import Service


@pytest.fixture
def service(tmp_path):
    """A real API server on the tests' Redis database, emptied first; workers are started by each test."""
    url = os.environ["NESYPLAN_REDIS_URL"]
    redis.Redis.from_url(url).flushdb()
    svc = Service(url, tmp_path)
    yield svc
    svc.close()
