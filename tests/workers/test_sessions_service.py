"""Conversations over HTTP: the API, real Redis and real Celery workers (translation on `llm` with the
packaged model), each in its own process. Turns run as Celery chains, so a killed worker loses no turn;
messages sent at once to one session are answered one after the other."""

import concurrent.futures
import os
import signal
import threading

import pytest
import redis
from kombu.transport.redis import Channel

from pipeline.sessions.engine import SessionEngine
from workers.celery_app import app as celery_app
from tests.harness import NO_BROKER_RESCUE, Service, stop, wait_until

TODAY = "2025-03-10"
DOMAIN = "restaurant_reservation"
OPENING = "I'd like a table at The Oak Room for 4 people on March 14 at 7pm"
ANSWERS = {"restaurant_name": "The Oak Room", "party_size": "four of us", "reservation_date": "March 14",
           "reservation_time": "7pm", "contact_name": "Ana Lopez", "contact_phone": "617-555-0199"}


def started(tmp_path, env=None):
    url = os.environ["NESYPLAN_REDIS_URL"]
    redis.Redis.from_url(url).flushdb()
    svc = Service(url, tmp_path, env=env)
    svc.env["NESYPLAN_WARM_UP_DOMAINS"] = DOMAIN
    return svc


@pytest.fixture
def service(tmp_path):
    svc = started(tmp_path)
    yield svc
    svc.close()


def protocol(reply):
    """A stored reply as the messages endpoint sends it (SPEC.md: no null fields)."""
    return {key: value for key, value in reply.items() if value is not None}


def open_session(service, **extra):
    response = service.http.post("/v1/sessions", json={"domain": DOMAIN, "today": TODAY, **extra})
    assert response.status_code == 201, response.text
    return response.json()["id"]


def say(service, session_id, text, timeout=180):
    response = service.http.post(f"/v1/sessions/{session_id}/messages", json={"text": text}, timeout=timeout)
    assert response.status_code == 200, response.text
    return response.json()


def test_a_conversation_over_http_asks_books_and_shows_every_turn(service):
    service.start_worker("llm", queues="llm")
    service.start_worker("cpu", queues="symbolic")
    session_id = open_session(service)
    reply = say(service, session_id, OPENING)
    for _ in range(7):
        if reply["kind"] not in ("ask", "confirm"):
            break
        reply = say(service, session_id, "yes" if reply["kind"] == "confirm" else ANSWERS[reply["slot"]])
    assert reply["kind"] == "done", reply
    assert [call["api"] for call in reply["result"]] == ["find_restaurant", "check_availability", "book_table"]
    view = service.http.get(f"/v1/sessions/{session_id}").json()
    turns = view["state"]["turns"]
    assert view["queued"] == len(turns) and turns[0]["message"] == OPENING and turns[0]["kind"] == "opening"
    assert protocol(turns[-1]["reply"]) == reply
    for turn in turns:  # each turn's Run, with its artifacts, inline and by id
        run = view["runs"][turn["run_id"]]
        assert run["status"] == "succeeded" and "(define (problem" in run["task_pddl"]["text"]
        assert service.http.get(f"/v1/plans/{turn['run_id']}/artifacts/plan.txt").status_code == 200
    ended = service.http.post(f"/v1/sessions/{session_id}/messages", json={"text": "thanks!"})
    assert ended.status_code == 409 and "ended" in ended.json()["detail"]


def test_bad_sessions_get_4xx(service):
    assert service.http.post("/v1/sessions", json={"domain": "weather"}).status_code == 404
    assert service.http.post("/v1/sessions", json={"domain": DOMAIN, "executor": "magic"}).status_code == 422
    assert service.http.get("/v1/sessions/0123456789abcdef").status_code == 404
    assert service.http.post("/v1/sessions/..%2Fx/messages", json={"text": "hi"}).status_code == 404
    session_id = open_session(service)
    assert service.http.post(f"/v1/sessions/{session_id}/messages", json={"text": ""}).status_code == 422


def test_messages_sent_at_once_are_answered_one_after_the_other(service):
    service.start_worker("llm", queues="llm")
    service.start_worker("cpu", queues="symbolic")
    service.start_worker("cpu2", queues="symbolic")
    session_id = open_session(service)
    first = say(service, session_id, "I'd like a table at The Oak Room for 4 people on March 14 at 7pm")
    assert first["kind"] == "ask"
    messages = ["Ana Lopez", "617-555-0199", "sorry, is there parking nearby?"]
    with concurrent.futures.ThreadPoolExecutor(max_workers=3) as pool:
        replies = list(pool.map(lambda m: say(service, session_id, m), messages))
    turns = service.http.get(f"/v1/sessions/{session_id}").json()["state"]["turns"]
    assert len(turns) == 4
    by_message = {turn["message"]: protocol(turn["reply"]) for turn in turns[1:]}
    assert [by_message[m] for m in messages] == replies  # each caller got its own turn's reply
    # The server's order, replayed one message at a time in this process, gives the same replies: no turn
    # was read in a context another turn had not finished writing.
    engine = SessionEngine("hf")
    state = engine.open(DOMAIN, TODAY)
    replayed = [engine.reply(state, turn["message"]).model_dump(exclude_none=True) for turn in turns]
    assert replayed == [protocol(turn["reply"]) for turn in turns]


@pytest.fixture
def patient_service(tmp_path):
    """A service whose API waits longer for a turn than a rescued one may take on a loaded machine (a new
    worker's start, its model load and its first sweep), and whose broker would give a dead worker's
    message back only after ten minutes."""
    svc = started(tmp_path, env={"NESYPLAN_SESSION_REPLY_TIMEOUT_S": "280", **NO_BROKER_RESCUE})
    yield svc
    svc.close()


def test_a_turn_survives_its_worker_killed_mid_turn(patient_service):
    service = patient_service
    doomed = service.start_worker("doomed", queues="llm")
    service.start_worker("cpu", queues="symbolic")
    assert wait_until(lambda: "ready" in (service.logs / "doomed.log").read_text(), 120)
    session_id = open_session(service)
    result = {}
    caller = threading.Thread(target=lambda: result.update(reply=say(service, session_id, OPENING, 300)))
    caller.start()
    # Killed once it holds the message ("received" is logged after the message is recorded as unacknowledged).
    assert wait_until(lambda: "session_translate[" in (service.logs / "doomed.log").read_text(), 60, 0.01)
    stop(doomed, signal.SIGKILL)
    state = service.http.get(f"/v1/sessions/{session_id}").json()["state"]
    assert not state["turns"], "the turn ended before the kill: the test proved nothing"
    # The worst moment to die: while holding the lock under which a worker gives unacknowledged messages
    # back. The dead worker's lock is left as it would leave it: the turn's hold must bring it back anyway.
    expire = celery_app.conf.broker_transport_options.get("unacked_mutex_expire", Channel.unacked_mutex_expire)
    orphan = service.redis.lock(Channel.unacked_mutex_key, timeout=expire)
    assert orphan.acquire(blocking=False)
    service.start_worker("rescuer", queues="llm")
    caller.join(300)
    assert result.get("reply", {}).get("kind") == "ask", result
    view = service.http.get(f"/v1/sessions/{session_id}").json()
    assert len(view["state"]["turns"]) == 1 and view["queued"] == 1
    assert protocol(view["state"]["turns"][0]["reply"]) == result["reply"]
