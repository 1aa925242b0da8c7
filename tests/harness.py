"""What the service tests (and `make chaos`) start and wait for: a Redis database, the API and workers, each
a real process of `nesyplan`."""

import os
import signal
import socket
import subprocess
import sys
import time

import httpx
import redis

from pipeline.packs.pack import PROJECT_ROOT

EXAMPLES = PROJECT_ROOT / "domains" / "quickbooks" / "examples"
DATAFLOW_IR = (EXAMPLES / "3_dataflow.lp").read_text()
# A killed worker's messages come back through its holds (workers/sweeper.py) alone: the broker's own
# redelivery at its production distance, heartbeats and sweeps often enough for a test to be short.
NO_BROKER_RESCUE = {"NESYPLAN_VISIBILITY_TIMEOUT_S": "600", "NESYPLAN_HEARTBEAT_S": "1",
                    "NESYPLAN_SWEEP_INTERVAL_S": "1"}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(args, env=None, log=None):
    return subprocess.Popen([sys.executable, "-m", "nesyplan.cli", *args], env={**os.environ, **(env or {})},
                            stdout=log or subprocess.DEVNULL, stderr=subprocess.STDOUT, start_new_session=True)


def stop(proc, sig=signal.SIGTERM):
    if proc.poll() is None:
        os.killpg(proc.pid, sig)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def wait_until(predicate, timeout, interval=0.1):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    return predicate()


class Service:
    """A Redis database, an API server and workers started for a test."""

    def __init__(self, redis_url, tmp_path, env=None, log_name="api"):
        self.env = {"NESYPLAN_REDIS_URL": redis_url, **(env or {})}
        self.redis = redis.Redis.from_url(redis_url)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.logs = tmp_path
        self.workers: list[subprocess.Popen] = []
        self.api = start(["serve", "--port", str(self.port)], self.env, open(tmp_path / f"{log_name}.log", "w"))
        self.http = httpx.Client(base_url=self.url, timeout=10)
        assert wait_until(self._api_up, 30), (tmp_path / f"{log_name}.log").read_text()

    def _api_up(self):
        try:
            return self.http.get("/healthz").status_code in (200, 503)  # up, with or without workers
        except httpx.TransportError:
            return False

    def start_worker(self, name, queues="symbolic", env=None):
        log = open(self.logs / f"{name}.log", "w")
        worker = start(["worker", "--queues", queues, "--concurrency", "1", "--name", f"{name}@test",
                        "--loglevel", "INFO"], {**self.env, **(env or {})}, log)
        self.workers.append(worker)
        return worker

    def submit(self, ir=DATAFLOW_IR, **extra):
        body = {"query": "a test request", "domain": "quickbooks", "today": "2024-10-15", "ir": ir, **extra}
        response = self.http.post("/v1/plans", json=body)
        assert response.status_code == 202, response.text
        return response.json()["id"]

    def status(self, run_id):
        return self.http.get(f"/v1/plans/{run_id}").json()["status"]

    def wait_all(self, ids, timeout=120):
        def finished():
            return all(self.status(i) in ("succeeded", "failed") for i in ids)
        return wait_until(finished, timeout, interval=0.3)

    def close(self):
        for proc in self.workers + [self.api]:
            stop(proc)
        self.http.close()


class PrivateRedis:
    """A redis-server of its own on a free loopback port. `persist`: every write is on disk before it is
    answered (append-only file, fsync always), so a killed server comes back with all it had, as a
    production one configured so does; otherwise it comes back empty."""

    def __init__(self, folder, persist: bool = False):
        self.port, self.folder, self.persist = free_port(), folder, persist
        self.proc: subprocess.Popen | None = None
        self.start()

    def url(self, db: int = 0) -> str:
        return f"redis://127.0.0.1:{self.port}/{db}"

    def start(self) -> None:
        durability = ["--appendonly", "yes", "--appendfsync", "always"] if self.persist else ["--appendonly", "no"]
        self.proc = subprocess.Popen(["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
                                      *durability, "--dir", str(self.folder)], stdout=subprocess.DEVNULL)
        assert wait_until(self.pings, 10), "redis-server did not start"

    def stop(self, sig=signal.SIGTERM) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(sig)
            self.proc.wait()

    def pings(self) -> bool:
        try:
            return redis.Redis(port=self.port, socket_connect_timeout=0.5).ping()
        except redis.exceptions.RedisError:
            return False
