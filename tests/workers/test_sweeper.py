"""Nothing accepted is lost (workers/sweeper.py): a run or a turn whose message the broker no longer holds
(Redis restarted without it, a send onto a broker that was away) is sent again by a worker's sweeper and
ends; one that still does not move ends failed with the reason. Real Redis, API and workers."""

import os

import pytest
import redis

from tests.harness import DATAFLOW_IR, Service, wait_until

QUICK_SWEEPS = {"NESYPLAN_SWEEP_INTERVAL_S": "0.5", "NESYPLAN_SWEEP_AFTER_S": "2"}


@pytest.fixture
def service(tmp_path):
    url = os.environ["NESYPLAN_REDIS_URL"]
    redis.Redis.from_url(url).flushdb()
    svc = Service(url, tmp_path, env={"NESYPLAN_SESSION_REPLY_TIMEOUT_S": "0.5"})
    yield svc
    svc.close()


def lose_every_queued_message(service):
    """What a Redis restart without persistence does to the broker, and only to it: the queues are gone."""
    for queue in (b"symbolic", b"llm"):
        service.redis.delete(queue)
    assert not service.redis.llen(b"symbolic") and not service.redis.llen(b"llm")


def test_runs_whose_messages_were_lost_are_sent_again_and_end(service):
    ids = [service.submit() for _ in range(3)]  # no worker yet: their messages wait in the queue
    assert wait_until(lambda: service.redis.llen(b"symbolic") >= 3, 10)
    lose_every_queued_message(service)
    assert service.redis.zcard("nesyplan:open:runs") == 3  # still tracked, though nothing will carry them
    service.start_worker("sweeping", env=QUICK_SWEEPS)
    assert service.wait_all(ids, timeout=120), [service.status(i) for i in ids]
    assert {service.status(i) for i in ids} == {"succeeded"}
    assert wait_until(lambda: service.redis.zcard("nesyplan:open:runs") == 0, 10)  # ended runs are let go


def test_a_run_that_never_moves_ends_failed_with_the_reason(service):
    run_id = service.submit(ir=DATAFLOW_IR)
    lose_every_queued_message(service)
    # A worker that takes no queue the run uses: every resend is lost too, until the sweeper gives up.
    service.start_worker("elsewhere", queues="nowhere", env={**QUICK_SWEEPS, "NESYPLAN_MAX_RESENDS": "2"})
    assert wait_until(lambda: service.status(run_id) == "failed", 60)
    failure = service.http.get(f"/v1/plans/{run_id}").json()["failure"]
    assert "did not move after being sent 2 more times" in failure["message"]


def test_a_turn_whose_message_was_lost_is_answered(service):
    session_id = service.http.post("/v1/sessions", json={"domain": "quickbooks", "today": "2024-10-15"}).json()["id"]
    answer = service.http.post(f"/v1/sessions/{session_id}/messages", json={"text": "help"})
    assert answer.status_code == 504  # no worker: the API stopped waiting, the message is kept
    lose_every_queued_message(service)
    service.start_worker("sweeping", queues="llm,symbolic", env=QUICK_SWEEPS)
    turns = lambda: service.http.get(f"/v1/sessions/{session_id}").json()["state"]["turns"]  # noqa: E731
    assert wait_until(lambda: len(turns()) == 1, 180)
    assert turns()[0]["reply"]["kind"] in ("ask", "done", "fail", "handoff", "confirm")


def test_only_what_a_dead_worker_held_is_sent_again_at_once(service):
    from pipeline.records import Run
    from workers import sweeper
    from workers.store import RunStore, SessionStore, beat

    runs, sessions = RunStore(), SessionStore()
    client = runs.client
    held = {name: Run(domain="quickbooks", today="2024-10-15", status="running") for name in
            ("alive", "dead", "restarted")}
    for name, run in held.items():
        runs.save(run)
        sweeper.moved(client, run.id)  # just moved: far from sweep_after_s, only a hold can make it stale
        client.hset(sweeper.HELD, f"run:{run.id}", f"{name}@w first 1.0")
    beat(client, "alive@w", "first", 60)
    beat(client, "restarted@w", "second", 60)  # the same name, started again: the first start is dead
    # "dead@w" has no heartbeat at all
    sent = []
    counts = sweeper.sweep(runs, sessions, lambda run_id, stages: sent.append(run_id), lambda *_: None)
    assert sorted(sent) == sorted([held["dead"].id, held["restarted"].id])
    assert counts["orphans"] == 2 and counts["runs_resent"] == 2
    assert client.hkeys(sweeper.HELD) == [f"run:{held['alive'].id}".encode()]  # the live hold is kept
    sent.clear()
    sweeper.sweep(runs, sessions, lambda run_id, stages: sent.append(run_id), lambda *_: None)
    assert sent == []  # sent once: their new messages are the broker's now


def test_a_run_whose_message_is_nowhere_is_sent_again_on_the_second_look(service):
    from pipeline.records import Run
    from workers import sweeper
    from workers.store import RunStore, SessionStore

    runs, sessions = RunStore(), SessionStore()
    client = runs.client
    lost, queued = (Run(domain="quickbooks", today="2024-10-15", status="running") for _ in range(2))
    for run in (lost, queued):
        runs.save(run)
        client.zadd(sweeper.OPEN_RUNS, {run.id: 900})  # quiet 100 s at `now`: far from sweep_after_s (600)
    client.lpush("symbolic", f'{{"headers": {{"argsrepr": "(\'{queued.id}\',)"}}}}')  # its message waits
    sent = []

    def look():
        return sweeper.sweep(runs, sessions, lambda run_id, stages: sent.append(run_id), lambda *_: None,
                             now=1000.0, unacked_key="unacked")

    assert look()["nowhere"] == 0 and sent == []  # once: it may be between its take and the record of it
    assert look()["nowhere"] == 1 and sent == [lost.id]  # twice: lost; the queued one is left alone
