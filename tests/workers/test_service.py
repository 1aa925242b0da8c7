"""The service against real Redis, real Celery workers and a real HTTP server, each in its own process."""

import concurrent.futures
import os
import re
import shutil
import signal
import subprocess
import sys

import pytest
import yaml

from pipeline.packs.pack import PROJECT_ROOT
from tests.harness import DATAFLOW_IR, EXAMPLES, NO_BROKER_RESCUE, PrivateRedis, Service, free_port, stop, wait_until


def test_a_request_goes_through_the_chain_and_its_artifacts_are_readable(service):
    service.start_worker("w1")
    run_id = service.submit()
    assert service.wait_all([run_id], 60)
    run = service.http.get(f"/v1/plans/{run_id}").json()
    assert run["status"] == "succeeded", run["failure"]
    assert list(run["timings_ms"]) == ["check", "materialize", "compile", "plan"]
    for name, needle in [("ir.lp", "_goal(g1, create_invoice)."), ("materialized.lp", "goal(g3,contact_us_api)."),
                         ("task.pddl", "(define (problem request)"), ("domain.pddl", "(define (domain quickbooks)"),
                         ("plan.txt", "z = contact_us_api(y, z_contact_channel);")]:
        response = service.http.get(f"/v1/plans/{run_id}/artifacts/{name}")
        assert response.status_code == 200 and needle in response.text, (name, response.text)
    assert service.http.get(f"/v1/plans/{run_id}/artifacts/secret.txt").status_code == 404
    health = wait_until(lambda: service.http.get("/healthz"), 30)
    assert health.status_code == 200 and health.json()["workers"] == 1


def test_health_counts_live_workers_by_heartbeat_names_nothing_and_holds_under_load(service):
    worker = service.start_worker("w1")
    assert wait_until(lambda: service.http.get("/healthz").status_code == 200, 90)
    assert service.http.get("/healthz").json() == {"ok": True, "redis": True, "workers": 1}  # no name, no address
    with concurrent.futures.ThreadPoolExecutor(max_workers=50) as pool:  # no broadcast per call to exhaust
        statuses = list(pool.map(lambda _: service.http.get("/healthz", timeout=30).status_code, range(200)))
    assert set(statuses) == {200}
    assert service.http.get("/v1/domains", timeout=10).status_code == 200
    stop(worker, signal.SIGKILL)  # its heartbeat runs out by itself
    assert wait_until(lambda: service.http.get("/healthz").status_code == 503, 60)
    assert service.http.get("/livez").json() == {"ok": True}


def test_a_plain_language_request_is_translated_on_the_llm_queue(service):
    service.start_worker("gpu", queues="llm")
    service.start_worker("cpu", queues="symbolic")
    response = service.http.post("/v1/plans", json={"query": "how do I reconcile my bank account",
                                                    "today": "2024-10-15"})
    assert response.status_code == 202, response.text
    run_id = response.json()["id"]
    assert service.wait_all([run_id], 240), (service.logs / "gpu.log").read_text()[-2000:]
    run = service.http.get(f"/v1/plans/{run_id}").json()
    assert list(run["timings_ms"])[:2] == ["translate", "check"] and run["translator"] == "hf"
    assert run["status"] == "succeeded", run["failure"]
    assert run["plan"]["calls"][0]["api"] == "help_api"
    for name in ("prompt.txt", "llm.txt", "ir.lp"):
        assert service.http.get(f"/v1/plans/{run_id}/artifacts/{name}").status_code == 200


def test_a_domain_error_is_a_failed_run_with_its_reason(service):
    service.start_worker("w1")
    run_id = service.submit(ir=(EXAMPLES / "4_error.lp").read_text())
    assert service.wait_all([run_id], 60)
    run = service.http.get(f"/v1/plans/{run_id}").json()
    assert run["status"] == "failed" and run["failure"]["kind"] == "domain_error"
    assert "ends before it starts" in run["failure"]["message"]
    assert service.http.get(f"/v1/plans/{run_id}/artifacts/plan.txt").status_code == 404


def test_fifty_concurrent_submissions_all_complete(service):
    service.start_worker("w1")
    service.start_worker("w2")
    irs = [p.read_text() for p in sorted(EXAMPLES.glob("*.lp"))]
    with concurrent.futures.ThreadPoolExecutor(max_workers=10) as pool:
        ids = list(pool.map(lambda i: service.submit(ir=irs[i % len(irs)]), range(50)))
    assert len(set(ids)) == 50
    assert service.wait_all(ids, 180)
    statuses = [service.status(i) for i in ids]
    expected = [("succeeded" if "error" not in p.name and "out_of_domain" not in p.name else "failed")
                for p in sorted(EXAMPLES.glob("*.lp"))]
    assert statuses == [expected[i % len(irs)] for i in range(50)]


def test_a_worker_killed_mid_chain_loses_and_duplicates_nothing(service):
    # Without the plan cache every request runs the planner, so the chains are slow enough to be caught
    # half-way (with it, twenty requests of one structure finish between two looks).
    # The broker's own redelivery is ten minutes off here (its production default): only the dead worker's
    # holds, found by the rescuer's sweep, bring its messages back.
    first = service.start_worker("doomed", env={"NESYPLAN_PLAN_CACHE_SIZE": "0", **NO_BROKER_RESCUE})
    ids = [service.submit() for _ in range(20)]
    # Kill it the hard way once some requests are done and others are half-way through their chain.
    def mid_chain():
        runs = [service.http.get(f"/v1/plans/{i}").json() for i in ids]
        done = sum(r["status"] == "succeeded" for r in runs)
        partial = sum(r["status"] == "running" for r in runs)
        return done >= 1 and partial >= 1
    assert wait_until(mid_chain, 60, interval=0.02)
    stop(first, signal.SIGKILL)
    unfinished = [i for i in ids if service.status(i) not in ("succeeded", "failed")]
    assert unfinished, "the worker was killed after all requests finished: the test proved nothing"
    service.start_worker("rescuer", env=NO_BROKER_RESCUE)
    assert service.wait_all(ids, 120), [service.status(i) for i in ids]
    runs = [service.http.get(f"/v1/plans/{i}").json() for i in ids]
    assert all(r["status"] == "succeeded" for r in runs), [r["failure"] for r in runs]
    assert all(r["plan"]["text"].count("contact_us_api(") == 1 for r in runs)
    stored = {k.decode().rsplit(":", 1)[1] for k in service.redis.scan_iter("nesyplan:run:*")}
    assert stored == set(ids)


@pytest.mark.parametrize("body, status", [
    (b"{not json", 422),
    (b'{"domain": "quickbooks"}', 422),                                 # no query
    (b'{"query": "", "ir": ""}', 422),                                  # empty query
    (b'{"query": "x", "today": "yesterday", "ir": ""}', 422),           # not a date
    (b'{"query": "x", "domain": "weather", "ir": ""}', 404),            # unknown domain
    (b'{"query": "x", "domain": "../../etc", "ir": ""}', 404),          # not even a name
    (b'{"query": "x", "translator": "magic"}', 400),                  # no such translator
    (b'[1, 2, 3]', 422),
])
def test_bad_input_gets_4xx_with_a_message(service, body, status):
    response = service.http.post("/v1/plans", content=body, headers={"content-type": "application/json"})
    assert response.status_code == status, response.text
    assert response.json()["detail"]


def test_unknown_runs_are_404(service):
    assert service.http.get("/v1/plans/0123456789abcdef").status_code == 404
    assert service.http.get("/v1/plans/..%2F..%2Fetc").status_code == 404
    assert service.http.get("/v1/plans/0123/artifacts/plan.txt").status_code == 404


def test_hostile_ir_is_a_failed_run_not_an_error(service):
    service.start_worker("w1")
    run_id = service.submit(ir='#script (python) import os; os.system("touch /tmp/x") #end.')
    assert service.wait_all([run_id], 60)
    run = service.http.get(f"/v1/plans/{run_id}").json()
    assert run["failure"]["kind"] == "ir_rejected"


def test_domains_are_listed(service):
    domains = service.http.get("/v1/domains").json()
    assert {"quickbooks"} <= {d["name"] for d in domains}
    assert "charge_lookup" in next(d for d in domains if d["name"] == "quickbooks")["goals"]


@pytest.fixture
def private_redis(tmp_path):
    if not shutil.which("redis-server"):
        pytest.skip("redis-server is not installed (.ci/run installs it)")
    server = PrivateRedis(tmp_path)
    yield server
    server.stop()


def test_the_service_recovers_when_redis_restarts(private_redis, tmp_path):
    svc = Service(private_redis.url(0), tmp_path)
    try:
        svc.start_worker("w1")
        first = svc.submit()
        assert svc.wait_all([first], 60) and svc.status(first) == "succeeded"
        private_redis.stop()
        down = svc.http.get(f"/v1/plans/{first}")
        assert down.status_code == 503 and "Redis" in down.json()["detail"]
        assert svc.http.get("/healthz").status_code == 503
        private_redis.start()  # an empty Redis: it kept nothing, as the machine's own keeps nothing
        second = wait_until(lambda: _try_submit(svc), 30)
        assert second, "the API did not accept requests after Redis came back"
        assert svc.wait_all([second], 90), (tmp_path / "w1.log").read_text()[-3000:]
        assert svc.status(second) == "succeeded"
    finally:
        svc.close()


def _try_submit(svc):
    response = svc.http.post("/v1/plans", json={"query": "q", "today": "2024-10-15", "ir": DATAFLOW_IR})
    return response.json()["id"] if response.status_code == 202 else None


def _compose(tmp_path, *args):
    return subprocess.run(["docker-compose", "-f", str(tmp_path / "docker-compose.yml"), *args],
                          capture_output=True, text=True, cwd=tmp_path)


def test_docker_compose_file_is_valid_and_locked_down(tmp_path):
    if not shutil.which("docker-compose"):
        pytest.skip("docker-compose is not installed (.ci/run installs it)")
    shutil.copy(PROJECT_ROOT / "docker-compose.yml", tmp_path)
    (tmp_path / ".env").write_text("")  # no secrets: compose refuses to start anything
    refused = _compose(tmp_path, "config", "-q")
    assert refused.returncode != 0 and "REDIS_PASSWORD" in refused.stderr
    shutil.copy(PROJECT_ROOT / ".env.example", tmp_path / ".env")
    result = _compose(tmp_path, "config")
    assert result.returncode == 0, result.stderr
    config = yaml.safe_load(result.stdout)["services"]
    # What `up` starts without a profile (compose v1 lists profiled services too, marked).
    assert {name for name, service in config.items() if not service.get("profiles")} == {
        "redis", "api", "worker-llm", "worker-symbolic", "flower"}
    assert "ports" not in config["redis"] and "--requirepass" in " ".join(config["redis"]["command"])
    assert all(str(p).startswith("127.0.0.1:") or p.get("host_ip") == "127.0.0.1"
               for p in config["flower"]["ports"]) and "--basic_auth" in " ".join(config["flower"]["command"])
    for name in ("api", "worker-llm", "worker-symbolic"):
        assert config[name]["environment"]["NESYPLAN_REDIS_URL"].startswith("redis://:change-me@redis:")
        assert config[name]["environment"]["NESYPLAN_API_KEYS"] == "change-me"  # which `nesyplan` refuses
    for name in ("redis", "flower"):  # the placeholder is refused before the server starts
        assert "!= change-me" in " ".join(config[name]["command"])
    assert "livez" in " ".join(config["api"]["healthcheck"]["test"]) and "ping" in " ".join(config["redis"]["healthcheck"]["test"])
    # The LLM behind a server: the product's own (profile served-llm) or vLLM on a GPU host (profile vllm),
    # the grammar sent in the field each reads; neither server is published.
    profiled = _compose(tmp_path, "--profile", "served-llm", "--profile", "vllm", "config")
    assert profiled.returncode == 0, profiled.stderr
    config = yaml.safe_load(profiled.stdout)["services"]
    for worker, server, field in (("worker-llm-served", "llm-server", "grammar"),
                                  ("worker-llm-vllm", "vllm", "structured_outputs")):
        environment = config[worker]["environment"]
        assert environment["NESYPLAN_TRANSLATOR"] == "openai" and f"//{server}:" in environment["NESYPLAN_OPENAI_BASE_URL"]
        assert environment["NESYPLAN_OPENAI_GRAMMAR_FIELD"] == field
        assert "ports" not in config[server]
    assert config["vllm"]["deploy"]["resources"]["reservations"]["devices"][0]["capabilities"] == ["gpu"]
    assert re.search(r"^USER (?!root)\w+", (PROJECT_ROOT / "Dockerfile").read_text(), re.MULTILINE)
    assert ".env" in (PROJECT_ROOT / ".dockerignore").read_text().split()  # never built into the image
    assert ".env" in (PROJECT_ROOT / ".gitignore").read_text().split()


def test_cli_submit_with_redis_down_says_so():
    env = {**os.environ, "NESYPLAN_REDIS_URL": f"redis://127.0.0.1:{free_port()}/0"}
    result = subprocess.run([sys.executable, "-m", "nesyplan.cli", "submit", "q", "--ir",
                             str(EXAMPLES / "1_complete.lp")], env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 2
    assert "is unavailable" in result.stderr and "Traceback" not in result.stderr
