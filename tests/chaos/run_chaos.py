"""`make chaos`: faults and load against a real service on loopback, each scenario bounded, with figures.

Everything runs on a Redis of its own (a free loopback port, every write on disk, as compose's Redis keeps
its data), the API (`nesyplan serve`, two keys), real Celery workers and `nesyplan serve-llm`. Settings are
production's (heartbeat 5 s, sweeps every 10 s, the broker's visibility timeout 600 s, rate limits on)
except where a scenario says otherwise. Each scenario prints its figures and whether it met its bound;
the command exits 1 when one did not.

  caps           100 concurrent submits against a queued-run cap of 10, and 100 concurrent messages against
                 a session cap of 10: exactly 10 accepted each
  health         200 health checks, 50 at a time: every other endpoint answers within 1 s meanwhile
  waits          a burst of 45 session messages from one key, each waiting for a reply no worker will give:
                 another key's calls answer within 1 s meanwhile
  redis          Redis killed (SIGKILL) and started again under 200 runs in flight: every accepted run ends
                 within 2 minutes (production's settings, no shortcut)
  worker         a symbolic and an LLM worker killed (SIGKILL) holding runs and a session's turn: all of them
                 finish within 60 s of new workers starting
  serve-llm      no key 401, a 100k-character prompt 413, a stream 400, an unknown model 404, a burst past its
                 waiting bound 429, and its model list answering within 1 s meanwhile

Usage: python tests/chaos/run_chaos.py [--only NAME ...] [--json]
"""

from __future__ import annotations

import argparse
import collections
import concurrent.futures
import json
import signal
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx
import redis

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.harness import DATAFLOW_IR, PrivateRedis, Service, free_port, start, stop, wait_until  # noqa: E402

KEY_A, KEY_B = "chaos-key-a-3f9d2c", "chaos-key-b-81e0a7"
SESSION_DOMAIN = "restaurant_reservation"
OPENING = "a table for two at a quiet place on friday evening"
# Production's, written out so that nothing in the caller's environment (a test run's short timeouts) leaks in.
PRODUCTION = {"NESYPLAN_VISIBILITY_TIMEOUT_S": "600", "NESYPLAN_RESTORE_INTERVAL_S": "5",
              "NESYPLAN_HEARTBEAT_S": "5", "NESYPLAN_SWEEP_INTERVAL_S": "10", "NESYPLAN_SWEEP_AFTER_S": "600",
              "NESYPLAN_RATE_LIMIT_PER_S": "20", "NESYPLAN_RATE_BURST": "60", "NESYPLAN_MAX_QUEUED_RUNS": "200",
              "NESYPLAN_ALLOWED_HOSTS": "127.0.0.1,localhost", "NESYPLAN_API_KEYS": f"{KEY_A},{KEY_B}",
              "NESYPLAN_WARM_UP_DOMAINS": f"quickbooks,{SESSION_DOMAIN}", "NESYPLAN_SESSION_REPLY_TIMEOUT_S": "20"}


def auth(key: str) -> dict:
    return {"Authorization": f"Bearer {key}"}


def timed(call) -> tuple[float, int]:
    """Seconds a call took and its status (0: no answer)."""
    began = time.monotonic()
    try:
        status = call().status_code
    except httpx.HTTPError:
        status = 0
    return time.monotonic() - began, status


class Prober:
    """Another client's calls, one every `every_s`, timed, while something else goes on."""

    def __init__(self, calls, every_s: float = 0.1):
        self.calls, self.every_s, self.samples = calls, every_s, []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            for call in self.calls:
                self.samples.append(timed(call))
            self._stop.wait(self.every_s)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *_):
        self._stop.set()
        self._thread.join()

    def figures(self) -> dict:
        seconds = sorted(s for s, _ in self.samples)
        return {"calls": len(seconds), "max_s": round(max(seconds), 3) if seconds else None,
                "p50_s": round(statistics.median(seconds), 3) if seconds else None,
                "statuses": _count(status for _, status in self.samples)}


def _count(values) -> dict:
    """How many of each value, by its text, in order (JSON keys)."""
    return dict(sorted(collections.Counter(map(str, values)).items()))


def in_parallel(call, count: int, width: int) -> list:
    with concurrent.futures.ThreadPoolExecutor(max_workers=width) as pool:
        return list(pool.map(lambda i: call(i), range(count)))


class Chaos:
    def __init__(self, folder: Path):
        self.folder = folder
        self.redis = PrivateRedis(folder, persist=True)
        self.store = redis.Redis.from_url(self.redis.url(0))
        self.service = self.api(PRODUCTION, "api")

    def api(self, env: dict, name: str) -> Service:
        service = Service(self.redis.url(0), self.folder, env={**PRODUCTION, **env}, log_name=name)
        service.http.headers.update(auth(KEY_B))
        return service

    def worker(self, name: str, queues: str = "symbolic", env: dict | None = None):
        return self.service.start_worker(name, queues, env={**PRODUCTION, **(env or {})})

    def open_session(self, key: str) -> str:
        response = self.service.http.post("/v1/sessions", json={"domain": SESSION_DOMAIN, "today": "2025-03-10"},
                                          headers=auth(key))
        assert response.status_code == 201, response.text
        return response.json()["id"]

    def close(self) -> None:
        self.service.close()
        self.redis.stop()

    # ---- scenarios -------------------------------------------------------------------------------------

    def caps(self) -> dict:
        capped = self.api({"NESYPLAN_MAX_QUEUED_RUNS": "10", "NESYPLAN_MAX_SESSION_MESSAGES": "10",
                           "NESYPLAN_RATE_LIMIT_PER_S": "0", "NESYPLAN_SESSION_REPLY_TIMEOUT_S": "1"}, "api-caps")
        try:
            self.store.flushdb()  # no worker takes anything: every accepted run stays queued
            body = {"query": "q", "domain": "quickbooks", "today": "2024-10-15", "ir": DATAFLOW_IR}
            runs = in_parallel(lambda _: capped.http.post("/v1/plans", json=body, timeout=30).status_code, 100, 100)
            session = capped.http.post("/v1/sessions", json={"domain": SESSION_DOMAIN}).json()["id"]
            messages = in_parallel(lambda i: capped.http.post(f"/v1/sessions/{session}/messages",
                                                              json={"text": f"message {i}"}, timeout=60).status_code,
                                   100, 100)
        finally:
            capped.close()
        accepted_runs = sum(s == 202 for s in runs)
        accepted_messages = sum(s in (200, 202, 504) for s in messages)
        return {"runs": _count(runs), "runs_accepted": accepted_runs, "messages": _count(messages),
                "messages_accepted": accepted_messages, "stored_messages": self.store.llen(
                    f"nesyplan:session:{session}:inbox"),
                "pass": accepted_runs == 10 and accepted_messages == 10}

    def health(self) -> dict:
        self.store.flushdb()
        worker = self.worker("health")
        assert wait_until(lambda: self.service.http.get("/healthz").status_code == 200, 120)
        run_id = self.service.submit()
        http = self.service.http
        with Prober([lambda: http.get("/v1/domains"), lambda: http.get(f"/v1/plans/{run_id}")]) as other:
            began = time.monotonic()
            # One client with 50 connections, as a monitoring system or a load balancer would hold them (a
            # client made per call spends this machine's two cores on itself, not on the service).
            with httpx.Client(base_url=self.service.url, timeout=30,
                              limits=httpx.Limits(max_connections=50, max_keepalive_connections=50)) as storm_client:
                storm = in_parallel(lambda _: timed(lambda: storm_client.get("/healthz")), 200, 50)
            took = time.monotonic() - began
        stop(worker)
        figures = other.figures()
        return {"health": _count(status for _, status in storm), "health_max_s": round(max(s for s, _ in storm), 3),
                "storm_s": round(took, 2), "other_key": figures,
                "pass": all(status for _, status in storm) and figures["max_s"] <= 1.0
                and set(figures["statuses"]) == {"200"}}

    def waits(self) -> dict:
        self.store.flushdb()  # no LLM worker: every message waits for a reply that does not come
        sessions = [self.open_session(KEY_A) for _ in range(45)]
        time.sleep(3)  # the key's bucket refills after the openings: the burst is within it
        http = self.service.http
        with Prober([lambda: http.get("/v1/domains"), lambda: http.post("/v1/plans", json={
                "query": "q", "domain": "quickbooks", "today": "2024-10-15", "ir": DATAFLOW_IR})], every_s=0.2) as other:
            burst = in_parallel(lambda i: timed(lambda: http.post(
                f"/v1/sessions/{sessions[i]}/messages", json={"text": OPENING}, headers=auth(KEY_A), timeout=60)),
                45, 45)
        figures = other.figures()
        return {"burst": _count(status for _, status in burst), "other_key": figures,
                "pass": figures["max_s"] <= 1.0 and set(figures["statuses"]) <= {"200", "202"}}

    def redis_restart(self) -> dict:
        self.store.flushdb()
        # 200 runs are submitted at once, past a key's rate limit, through an API without one.
        workers = [self.worker(f"w{i}") for i in (1, 2)]
        api = self.api({"NESYPLAN_RATE_LIMIT_PER_S": "0"}, "api-redis")
        body = {"query": "q", "domain": "quickbooks", "today": "2024-10-15", "ir": DATAFLOW_IR}

        def submit(_):
            response = api.http.post("/v1/plans", json=body, timeout=30)
            return response.json()["id"] if response.status_code == 202 else None

        ids = [i for i in in_parallel(submit, 200, 20) if i]
        ended = lambda: sum(self._status(i) in ("succeeded", "failed") for i in ids)  # noqa: E731
        wait_until(lambda: ended() >= 10, 120, interval=0.05)  # killed with the workers under way
        in_flight = len(ids) - ended()
        self.redis.stop(signal.SIGKILL)
        while_down = [timed(lambda: api.http.get(f"/v1/plans/{ids[0]}")) for _ in range(5)]
        time.sleep(3)  # down for a while, as a restart is
        self.redis.start()
        restarted = time.monotonic()
        all_ended = wait_until(lambda: ended() == len(ids), 120, interval=1)
        took = time.monotonic() - restarted
        statuses = _count(self._status(i) for i in ids)
        stuck = [self._why(i) for i in ids if self._status(i) not in ("succeeded", "failed")][:3]
        for worker in workers:
            stop(worker)
        api.close()
        return {"accepted": len(ids), "in_flight_at_kill": in_flight, "while_down": _count(s for _, s in while_down),
                "while_down_max_s": round(max(s for s, _ in while_down), 3), "final": statuses,
                "all_ended_s_after_restart": round(took, 1), "stuck": stuck, "pass": bool(all_ended) and in_flight > 0}

    def worker_kill(self) -> dict:
        self.store.flushdb()
        doomed = [self.worker("doomed-cpu", env={"NESYPLAN_PLAN_CACHE_SIZE": "0"}),
                  self.worker("doomed-llm", queues="llm")]
        assert wait_until(lambda: self.store.exists("nesyplan:heartbeat:doomed-llm@test"), 180)
        ids = [self.service.submit() for _ in range(20)]
        session = self.open_session(KEY_B)
        threading.Thread(target=lambda: self.service.http.post(f"/v1/sessions/{session}/messages",
                                                               json={"text": OPENING}, timeout=60),
                         daemon=True).start()
        turn_held = lambda: self.store.hexists("nesyplan:held", f"turn:{session}:0")  # noqa: E731

        def mid_work():
            statuses = [self._status(i) for i in ids]
            return turn_held() and "succeeded" in statuses and "running" in statuses
        caught = wait_until(mid_work, 120, interval=0.02)
        for worker in doomed:
            stop(worker, signal.SIGKILL)
        unfinished = sum(self._status(i) not in ("succeeded", "failed") for i in ids)
        turn_open = not self._turns(session)
        started = time.monotonic()
        rescuers = [self.worker("rescuer-cpu"), self.worker("rescuer-llm", queues="llm")]
        done = wait_until(lambda: all(self._status(i) in ("succeeded", "failed") for i in ids)
                          and self._turns(session), 180, interval=0.5)
        took = time.monotonic() - started
        for worker in rescuers:
            stop(worker)
        return {"caught_mid_work": bool(caught), "runs_unfinished_at_kill": unfinished, "turn_open_at_kill": turn_open,
                "runs": _count(self._status(i) for i in ids), "turns": len(self._turns(session)),
                "seconds_after_new_workers": round(took, 1),
                "pass": bool(caught and done) and unfinished > 0 and turn_open and took <= 60
                and all(self._status(i) == "succeeded" for i in ids)}

    def serve_llm(self) -> dict:
        port = free_port()
        proc = start(["serve-llm", "--port", str(port)],
                     {**PRODUCTION, "NESYPLAN_API_KEYS": KEY_A, "NESYPLAN_LLM_MAX_WAITING": "4"},
                     open(self.folder / "serve-llm.log", "w"))
        url = f"http://127.0.0.1:{port}/v1"
        client = httpx.Client(headers=auth(KEY_A), timeout=120)
        try:
            assert wait_until(lambda: _answers(client, f"{url}/models"), 180), "serve-llm did not start"

            def chat(content="hi", **extra):
                return client.post(f"{url}/chat/completions", json={
                    "model": "nesyplan", "max_tokens": 32, "messages": [{"role": "user", "content": content}], **extra})

            figures = {"no_key": httpx.get(f"{url}/models").status_code}
            figures["huge_s"], figures["huge"] = timed(lambda: chat("x" * 100_000))
            figures["stream"] = chat(stream=True).status_code
            figures["unknown_model"] = chat(model="gpt-4o").status_code
            with Prober([lambda: client.get(f"{url}/models")]) as other:
                burst = in_parallel(lambda i: chat(f"count to {20 + i}").status_code, 16, 16)
            figures.update(burst=_count(burst), models_meanwhile=other.figures())
        finally:
            client.close()
            stop(proc)
        figures["huge_s"] = round(figures["huge_s"], 3)
        figures["pass"] = (figures["no_key"] == 401 and figures["huge"] == 413 and figures["huge_s"] <= 1.0
                           and figures["stream"] == 400 and figures["unknown_model"] == 404
                           and {"200", "429"} <= set(figures["burst"]) and figures["models_meanwhile"]["max_s"] <= 1.0)
        return figures

    # ---- helpers -----------------------------------------------------------------------------------------

    def _status(self, run_id: str) -> str | None:
        data = self.store.get(f"nesyplan:run:{run_id}")
        return json.loads(data)["status"] if data else None

    def _why(self, run_id: str) -> dict:
        """What is known of a run that did not end: its stages done, who holds it, when it last moved."""
        run = json.loads(self.store.get(f"nesyplan:run:{run_id}") or "{}")
        held = self.store.hget("nesyplan:held", f"run:{run_id}")
        return {"run": run_id, "status": run.get("status"), "stages": sorted(run.get("timings_ms", {})),
                "held": held.decode() if held else None, "moved": self.store.zscore("nesyplan:open:runs", run_id),
                "queued": {q: self.store.llen(q) for q in ("symbolic", "llm")},
                "unacked": sum(run_id in raw.decode() for raw in self.store.hvals("unacked")),
                "resends": self.store.hget("nesyplan:resends", run_id)}

    def _turns(self, session_id: str) -> list:
        data = self.store.get(f"nesyplan:session:{session_id}")
        return json.loads(data)["turns"] if data else []


def _answers(client: httpx.Client, url: str) -> bool:
    try:
        return client.get(url, timeout=2).status_code == 200
    except httpx.HTTPError:
        return False


SCENARIOS = {"caps": Chaos.caps, "health": Chaos.health, "waits": Chaos.waits, "redis": Chaos.redis_restart,
             "worker": Chaos.worker_kill, "serve-llm": Chaos.serve_llm}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", choices=sorted(SCENARIOS), help="scenarios to run (default: all)")
    parser.add_argument("--json", action="store_true")
    options = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="nesyplan-chaos-"))
    chaos, results = Chaos(folder), {}
    try:
        for name in options.only or SCENARIOS:
            began = time.monotonic()
            try:
                results[name] = SCENARIOS[name](chaos)
            except Exception as error:  # noqa: BLE001 - a scenario that breaks is a failed one, the rest still run
                results[name] = {"error": f"{type(error).__name__}: {error}", "pass": False}
            results[name]["scenario_s"] = round(time.monotonic() - began, 1)
            if not options.json:
                print(f"{'ok  ' if results[name]['pass'] else 'FAIL'} {name}: "
                      f"{json.dumps({k: v for k, v in results[name].items() if k != 'pass'})}", flush=True)
    finally:
        chaos.close()
    if options.json:
        print(json.dumps({"logs": str(folder), **results}, indent=2))
    else:
        print(f"logs: {folder}")
    sys.exit(0 if all(r["pass"] for r in results.values()) else 1)


if __name__ == "__main__":
    main()
