import os

# Queue tests use their own Redis database on the machine's Redis, and short redelivery times so that a
# killed worker's messages come back within seconds. Set before anything reads the settings.
os.environ.setdefault("NESYPLAN_REDIS_URL", "redis://127.0.0.1:6379/14")
os.environ.setdefault("NESYPLAN_VISIBILITY_TIMEOUT_S", "3")
os.environ.setdefault("NESYPLAN_RESTORE_INTERVAL_S", "1")

import pytest  # noqa: E402

from pipeline.packs.pack import load_pack  # noqa: E402


@pytest.fixture(scope="session")
def pack():
    return load_pack("quickbooks")
