"""Packs as a service, against real Redis, a real API server and real workers, each in its own process:
uploaded through the API and the CLI, planned on workers that do not have them on their disk, versions
switched without touching a run in flight, kept apart per key, hostile uploads refused."""

import copy
import json
import os
import subprocess
import sys

import redis

from pipeline.packs.versions import read_archive, version_digest
from tests.authoring.test_openapi_packs import GARAGE
from tests.harness import Service, stop

SELL = {"post": {"operationId": "sellCar", "summary": "Sell a car",
                 "parameters": [{"name": "carId", "in": "path", "required": True, "schema": {"type": "integer"}}],
                 "responses": {"200": {"description": "sold"}}}}
REGISTER_IR = '_goal(g1, register_car).\n_plate(g1, "KX 11").\n'
SELL_IR = '_goal(g1, sell_car).\n_car_id(g1, "12").\n'


def garage_v2() -> dict:
    spec = copy.deepcopy(GARAGE)
    spec["paths"]["/cars/{carId}/sale"] = SELL
    return spec


def host(tmp_path, name: str) -> dict:
    """A worker host of its own: an empty packs folder and its own cache of stored versions."""
    for folder in ("domains", "asp_rules", "pddl"):
        (tmp_path / name / "packs" / folder).mkdir(parents=True)
    return {"NESYPLAN_PACKS_DIR": str(tmp_path / name / "packs"), "NESYPLAN_PACK_CACHE_DIR": str(tmp_path / name / "cache"),
            "NESYPLAN_WARM_UP_DOMAINS": ""}


def cli(service: Service, *args: str, key: str | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, **service.env, "NESYPLAN_API_URL": service.url}
    if key:
        env["NESYPLAN_API_KEY"] = key
    return subprocess.run([sys.executable, "-m", "nesyplan.cli", "packs", *args], env=env, capture_output=True,
                          text=True, timeout=180)


def submit(service: Service, ir: str, domain: str = "garage", key: str | None = None) -> str:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    response = service.http.post("/v1/plans", json={"query": "a test request", "domain": domain, "today": "2026-05-04",
                                                    "ir": ir}, headers=headers)
    assert response.status_code == 202, response.text
    return response.json()["id"]


def finished(service: Service, run_id: str) -> dict:
    assert service.wait_all([run_id], 90), service.http.get(f"/v1/plans/{run_id}").json()
    return service.http.get(f"/v1/plans/{run_id}").json()


def test_a_pack_pushed_through_the_cli_plans_on_two_workers_that_do_not_have_it(service, tmp_path):
    spec = tmp_path / "garage.json"
    spec.write_text(json.dumps(GARAGE))
    pushed = cli(service, "push", str(spec), "--name", "garage")
    assert pushed.returncode == 0, pushed.stderr
    digest = service.http.get("/v1/packs/garage/versions").json()[0]["digest"]
    assert pushed.stdout.split() == ["garage", digest[:12], "(active)"]
    for name in ("host_a", "host_b"):  # one at a time, so that each one must plan it
        worker = service.start_worker(name, env=host(tmp_path, name))
        run = finished(service, submit(service, REGISTER_IR))
        stop(worker)
        assert run["status"] == "succeeded", (run["failure"], (tmp_path / f"{name}.log").read_text()[-2000:])
        assert run["pack_digest"] == digest and [c["api"] for c in run["plan"]["calls"]] == ["register_car"]
        assert (tmp_path / name / "cache" / digest / "domains" / "garage" / "pack.yaml").is_file()
    assert cli(service, "list").stdout.splitlines()[0].split()[:2] == ["garage", digest[:12]]



def test_a_worker_whose_disk_holds_another_copy_of_an_installed_pack_runs_the_apis_version(service, tmp_path):
    from pipeline.packs.versions import installed_digest, installed_files, write_version

    env = host(tmp_path, "stale")
    files = installed_files("quickbooks")
    files["rules/normalize.lp"] += b"\n% edited on this host only\n"
    write_version(tmp_path / "stale" / "packs", files)
    service.start_worker("stale", env=env)
    run = finished(service, service.submit())
    assert run["status"] == "succeeded", run["failure"]
    assert run["pack_digest"] == installed_digest("quickbooks") != version_digest(files)
    assert (tmp_path / "stale" / "cache" / run["pack_digest"] / "domains" / "quickbooks").is_dir()


def test_activating_an_older_version_switches_new_runs_and_not_a_run_in_flight(service, tmp_path):
    first = service.http.post("/v1/packs?name=garage", content=json.dumps(GARAGE))
    second = service.http.post("/v1/packs?name=garage", content=json.dumps(garage_v2()))
    assert first.status_code == second.status_code == 201, (first.text, second.text)
    v1, v2 = first.json()["packs"][0]["digest"], second.json()["packs"][0]["digest"]
    assert v1 != v2 and [v["active"] for v in service.http.get("/v1/packs/garage/versions").json()] == [False, True]
    in_flight = submit(service, SELL_IR)  # made on v2; no worker has taken it yet
    activated = cli(service, "activate", "garage", v1[:10])
    assert activated.returncode == 0, activated.stderr
    after = submit(service, SELL_IR)  # made on v1, which has no sale
    service.start_worker("w1", env=host(tmp_path, "w1"))
    run, later = finished(service, in_flight), finished(service, after)
    assert (run["pack_digest"], run["status"]) == (v2, "succeeded"), run["failure"]
    assert [c["api"] for c in run["plan"]["calls"]] == ["sell_car"]
    assert (later["pack_digest"], later["status"]) == (v1, "failed") and "sell_car" in later["failure"]["message"]
    rolled = cli(service, "rollback", "garage")
    assert rolled.returncode == 0 and v2[:12] in rolled.stdout, rolled.stderr
    assert finished(service, submit(service, SELL_IR))["status"] == "succeeded"
    assert cli(service, "rollback", "garage").returncode == 0  # back to v1 again (v2 replaced it)
    assert cli(service, "rollback", "garage").returncode == 1  # nothing was active before v1
    # What made the run in flight can be read back whole, by its digest.
    pulled = cli(service, "pull", "garage", run["pack_digest"], str(tmp_path / "made_it.tar.gz"))
    assert pulled.returncode == 0, pulled.stderr
    files = read_archive((tmp_path / "made_it.tar.gz").read_bytes())
    assert version_digest(files) == v2 and b"sell_car" in files["pack.yaml"]


def test_a_key_never_sees_nor_uses_another_keys_pack(tmp_path):
    url = os.environ["NESYPLAN_REDIS_URL"]
    redis.Redis.from_url(url).flushdb()
    svc = Service(url, tmp_path, env={"NESYPLAN_API_KEYS": "key-of-ann,key-of-bob"})
    try:
        ann, bob = ({"Authorization": f"Bearer {k}"} for k in ("key-of-ann", "key-of-bob"))
        stored = svc.http.post("/v1/packs?name=garage", content=json.dumps(GARAGE), headers=ann)
        assert stored.status_code == 201, stored.text
        digest = stored.json()["packs"][0]["digest"]
        assert "garage" in [p["name"] for p in svc.http.get("/v1/packs", headers=ann).json()]
        assert "garage" not in [p["name"] for p in svc.http.get("/v1/packs", headers=bob).json()]
        assert "garage" not in [d["name"] for d in svc.http.get("/v1/domains", headers=bob).json()]
        for method, path, body in [("GET", "/v1/packs/garage/versions", None),
                                   ("POST", "/v1/packs/garage/activate", {"digest": digest}),
                                   ("POST", "/v1/packs/garage/rollback", None),
                                   ("POST", "/v1/plans", {"query": "x", "domain": "garage", "ir": REGISTER_IR}),
                                   ("POST", "/v1/sessions", {"domain": "garage"})]:
            response = svc.http.request(method, path, json=body, headers=bob)
            assert response.status_code == 404, (path, response.text)
        opened = svc.http.post("/v1/sessions", json={"domain": "garage"}, headers=ann)
        assert opened.status_code == 201, opened.text
        session = svc.http.get(f"/v1/sessions/{opened.json()['id']}", headers=ann).json()
        assert session["state"]["pack_digest"] == digest
        # Bob's own pack of the same name is his, and another version: Ann's stays as it was.
        mine = svc.http.post("/v1/packs?name=garage", content=json.dumps(garage_v2()), headers=bob)
        assert mine.status_code == 201 and mine.json()["packs"][0]["digest"] != digest
        assert [v["digest"] for v in svc.http.get("/v1/packs/garage/versions", headers=ann).json()] == [digest]
        assert svc.http.delete("/v1/packs/garage", headers=bob).status_code == 204
        assert svc.http.get("/v1/packs/garage/versions", headers=bob).status_code == 404
        assert svc.http.get(f"/v1/packs/garage/versions/{digest}", headers=ann).status_code == 200
    finally:
        svc.close()


def test_hostile_or_broken_uploads_are_refused_clearly_and_nothing_is_stored(service):
    from pipeline.packs.versions import archive_of
    from tests.authoring.test_pack_uploads import zipped

    script = {"pack.yaml": b"name: evil\n", "domain.pddl": b"(define (domain evil))\n",
              "rules/run.lp": b'#script (python)\nimport os\nos.system("touch /tmp/owned")\n#end.\n'}
    cases = [
        (json.dumps({"openapi": "3.0.0", "info": {}}).encode(), 422, "no `paths`"),
        (zipped({"../../escape.lp": b"a."}), 422, "a path outside the pack"),
        (archive_of(script), 422, "#script"),
        (b"just some words", 422, "neither an archive"),
        (json.dumps(GARAGE).encode(), 409, "installed pack's name"),  # ?name=quickbooks below
        (b"x" * (9 * 1024 * 1024), 413, "request body over"),
    ]
    for body, status, message in cases:
        name = "?name=quickbooks" if status == 409 else ""
        response = service.http.post(f"/v1/packs{name}", content=body)
        assert response.status_code == status and message in response.text, (message, response.text[:500])
    problems = service.http.post("/v1/packs", content=archive_of(script)).json()["detail"]
    assert problems == [{"file": "rules/run.lp", "line": 1,
                         "message": "#script: an uploaded rule file holds plain rules, #show and #defined only"}]
    assert not os.path.exists("/tmp/owned")
    assert service.http.get("/v1/packs").json()[0]["shared"]  # only the installed packs
    assert not [k for k in service.redis.scan_iter("nesyplan:packs:*")]
