"""`make load`: locust against the service (API + two symbolic workers, real Redis), N requests, then
every accepted run is followed to its end. Prints requests, HTTP status counts, 5xx, lost runs, p50/p99.

A mix like a client's: submit a request (its IR given, so the symbolic path is measured), read a run,
read an artifact, list the domains. Usage: python tests/load/run_load.py [--requests 10000] [--users 20]
"""

from gevent import monkey

monkey.patch_all()

import argparse  # noqa: E402
import collections  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import random  # noqa: E402
import signal  # noqa: E402
import socket  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import gevent  # noqa: E402
import redis  # noqa: E402
from locust import FastHttpUser, constant, events, task  # noqa: E402
from locust.env import Environment  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "domains" / "quickbooks" / "examples").glob("*.lp"))
KEY = "load-test-key"
accepted: list[str] = []
statuses: collections.Counter = collections.Counter()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Client(FastHttpUser):
    wait_time = constant(0)

    AUTH = {"Authorization": f"Bearer {KEY}"}

    @task(3)
    def submit(self):
        ir = random.choice(EXAMPLES).read_text()
        with self.client.post("/v1/plans", json={"query": "load", "domain": "quickbooks", "today": "2024-10-15",
                                                 "ir": ir}, headers=self.AUTH, catch_response=True, name="POST /v1/plans") as r:
            if r.status_code == 202:
                accepted.append(r.json()["id"])
                r.success()
            elif r.status_code == 429:
                r.success()  # the per-key cap doing its job: counted apart

    @task(4)
    def read_run(self):
        if accepted:
            self.client.get(f"/v1/plans/{random.choice(accepted)}", headers=self.AUTH, name="GET /v1/plans/{id}")

    @task(1)
    def read_artifact(self):
        if accepted:
            with self.client.get(f"/v1/plans/{random.choice(accepted)}/artifacts/ir.lp", headers=self.AUTH, catch_response=True,
                                 name="GET /v1/plans/{id}/artifacts/ir.lp") as r:
                if r.status_code in (200, 404):
                    r.success()

    @task(1)
    def domains(self):
        self.client.get("/v1/domains", headers=self.AUTH, name="GET /v1/domains")


@events.request.add_listener
def count_status(response=None, **_):
    statuses[getattr(response, "status_code", 0) or 0] += 1


def start(args, env, log):
    return subprocess.Popen([sys.executable, "-m", "nesyplan.cli", *args], env=env, stdout=log,
                            stderr=subprocess.STDOUT, start_new_session=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=10_000)
    parser.add_argument("--users", type=int, default=20)
    parser.add_argument("--redis-url", default=os.environ.get("NESYPLAN_LOAD_REDIS_URL", "redis://127.0.0.1:6379/12"))
    options = parser.parse_args()
    redis.Redis.from_url(options.redis_url).flushdb()
    port, logs = free_port(), Path(tempfile.mkdtemp(prefix="nesyplan-load-"))
    env = {**os.environ, "NESYPLAN_REDIS_URL": options.redis_url, "NESYPLAN_API_KEYS": KEY,
           "NESYPLAN_RATE_LIMIT_PER_S": "0", "NESYPLAN_WARM_UP_DOMAINS": "quickbooks"}
    processes = [start(["serve", "--port", str(port)], env, open(logs / "api.log", "w"))]
    processes += [start(["worker", "--queues", "symbolic", "--concurrency", "1", "--name", f"load{i}@%h"], env,
                        open(logs / f"worker{i}.log", "w")) for i in (1, 2)]
    try:
        host = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if socket.create_connection(("127.0.0.1", port), timeout=1):
                    break
            except OSError:
                time.sleep(0.5)
        time.sleep(2)
        environment = Environment(user_classes=[Client], host=host, events=events)
        runner = environment.create_local_runner()
        started = time.monotonic()
        runner.start(options.users, spawn_rate=options.users)
        while environment.stats.total.num_requests < options.requests:
            gevent.sleep(0.2)
        runner.quit()
        took = time.monotonic() - started
        total = environment.stats.total
        store = redis.Redis.from_url(options.redis_url)
        ids = list(dict.fromkeys(accepted))

        def unfinished():
            ended = 0
            for run_id in ids:
                data = store.get(f"nesyplan:run:{run_id}")
                ended += bool(data) and json.loads(data)["status"] in ("succeeded", "failed")
            return len(ids) - ended

        drain_started = time.monotonic()
        while unfinished() and time.monotonic() - drain_started < 300:
            time.sleep(1)
        lost = unfinished()
        result = {
            "requests": total.num_requests, "seconds": round(took, 1), "requests_per_s": round(total.num_requests / took, 1),
            "status_counts": {str(k): v for k, v in sorted(statuses.items())},
            "http_5xx": sum(v for k, v in statuses.items() if k >= 500),
            "connection_errors": statuses.get(0, 0),
            "runs_accepted": len(ids), "runs_lost": lost,
            "drain_seconds": round(time.monotonic() - drain_started, 1),
            "p50_ms": total.get_response_time_percentile(0.5), "p99_ms": total.get_response_time_percentile(0.99),
            "by_endpoint": {name: {"requests": s.num_requests, "p50_ms": s.get_response_time_percentile(0.5),
                                   "p99_ms": s.get_response_time_percentile(0.99)}
                            for (name, _), s in environment.stats.entries.items()},
            "logs": str(logs),
        }
        print(json.dumps(result, indent=2))
        unexpected = sum(v for k, v in statuses.items() if k not in (200, 202, 404, 429))
        sys.exit(0 if unexpected == 0 and lost == 0 else 1)
    finally:
        for process in processes:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
        for process in processes:
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)


if __name__ == "__main__":
    main()
