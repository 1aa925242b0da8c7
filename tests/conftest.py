import os

# Queue tests use their own Redis database on the machine's Redis, and short redelivery times so that a
# killed worker's messages come back within seconds. Set before anything reads the settings.
# Under pytest-xdist (`make test` runs two processes) each process takes a database of its own: the queue tests
# empty theirs first. It is set, not defaulted: a process inherits the environment of the one that started it.
_XDIST_WORKER = os.environ.get("PYTEST_XDIST_WORKER", "")
if _XDIST_WORKER:
    os.environ["NESYPLAN_REDIS_URL"] = f"redis://127.0.0.1:6379/{14 - int(_XDIST_WORKER.removeprefix('gw'))}"
os.environ.setdefault("NESYPLAN_REDIS_URL", "redis://127.0.0.1:6379/14")
# Two processes on two cores: one thread each for torch and the BLAS it uses, or they contend for the cores.
if _XDIST_WORKER:
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    os.environ.setdefault("MKL_NUM_THREADS", "1")
os.environ.setdefault("NESYPLAN_VISIBILITY_TIMEOUT_S", "3")
os.environ.setdefault("NESYPLAN_RESTORE_INTERVAL_S", "1")
# Tests poll the API hard; the rate limit has its own tests (tests/workers/test_auth.py).
os.environ.setdefault("NESYPLAN_RATE_LIMIT_PER_S", "0")
# In-process clients (schemathesis over ASGI) call the app as `testserver`; every other name stays refused.
os.environ.setdefault("NESYPLAN_ALLOWED_HOSTS", "localhost,127.0.0.1,::1,testserver")

import pytest  # noqa: E402

from pipeline.packs.pack import load_pack  # noqa: E402


@pytest.fixture(scope="session")
def pack():
    return load_pack("quickbooks")

# Fuzzing budgets: `ci` for `make test`, `long` for `make fuzz` (HYPOTHESIS_PROFILE=long).
from hypothesis import settings as hypothesis_settings  # noqa: E402

hypothesis_settings.register_profile("ci", max_examples=60, deadline=None, derandomize=True)
hypothesis_settings.register_profile("long", max_examples=3000, deadline=None)
hypothesis_settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
