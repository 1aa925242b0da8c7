"""The `http` executor against a real HTTP server: a small restaurant API (FastAPI, its own SQLite file)
started for these tests in its own process. Retries, idempotency keys, refusals and timeouts, alone and
inside a session with the real model."""

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from pipeline.packs.pack import load_pack
from pipeline.sessions.engine import SessionEngine
from pipeline.sessions.executors import ExecutionError, HttpExecutor
from pipeline.settings import settings
from tests.harness import free_port, stop, wait_until

HERE = Path(__file__).resolve().parent
OPENING = "I'd like a table at The Oak Room for 4 people on March 14 at 7pm"
ANSWERS = {"restaurant_name": "The Oak Room", "contact_name": "Ana Lopez", "contact_phone": "617-555-0199"}


class RestaurantApi:
    def __init__(self, tmp_path):
        self.db_path = tmp_path / "restaurant.sqlite"
        self.url = f"http://127.0.0.1:{free_port()}"
        self.process = subprocess.Popen(
            [sys.executable, "-m", "uvicorn", "restaurant_api:app", "--app-dir", str(HERE),
             "--port", self.url.rsplit(":", 1)[1], "--log-level", "warning"],
            env={**os.environ, "RESTAURANT_API_DB": str(self.db_path)}, start_new_session=True)
        assert wait_until(self._up, 30), "the restaurant API did not start"

    def _up(self):
        try:
            return httpx.get(self.url + "/_attempts").status_code == 200
        except httpx.TransportError:
            return False

    def faults(self, **by_path):
        httpx.post(self.url + "/_faults", json=by_path).raise_for_status()

    def attempts(self):
        return httpx.get(self.url + "/_attempts").json()

    def rows(self, table):
        with sqlite3.connect(self.db_path) as connection:
            return connection.execute(f"SELECT * FROM {table}").fetchall()


@pytest.fixture(scope="module")
def api(tmp_path_factory):
    server = RestaurantApi(tmp_path_factory.mktemp("restaurant"))
    yield server
    stop(server.process)


@pytest.fixture
def executor(api):
    api.faults()
    return HttpExecutor(load_pack("restaurant_reservation"), session_id="s1", base_url=api.url, timeout_s=2,
                        retries=2, backoff_s=0.05)


def test_a_500_after_the_write_is_retried_and_the_booking_is_written_once(api, executor):
    before = len(api.rows("bookings"))
    api.faults(**{"/bookings": {"fail_after_work": 1}})
    booking = executor.call("book_table", {"availability_id": "a1", "contact_name": "Ana Lopez",
                                           "contact_phone": "617-555-0199"})
    attempts = [a for a in api.attempts() if a["path"] == "/bookings"]
    assert len(attempts) == 2 and attempts[0]["key"] and attempts[0]["key"] == attempts[1]["key"]
    rows = api.rows("bookings")
    assert len(rows) == before + 1 and rows[-1][0] == booking and rows[-1][3:] == ("Ana Lopez", "617-555-0199")


def test_another_call_gets_another_key(api, executor):
    first = executor.call("book_table", {"availability_id": "a1", "contact_name": "Ana", "contact_phone": "1"})
    second = executor.call("book_table", {"availability_id": "a2", "contact_name": "Ana", "contact_phone": "1"})
    assert first != second
    keys = [a["key"] for a in api.attempts()]
    assert len(set(keys)) == 2


def test_a_refusal_is_not_retried_and_says_why(api, executor):
    with pytest.raises(ExecutionError, match="HTTP 404: no restaurant named Chez Nobody"):
        executor.call("find_restaurant", {"restaurant_name": "Chez Nobody"})
    assert len(api.attempts()) == 1


def test_a_server_that_keeps_failing_ends_after_the_retries(api, executor):
    api.faults(**{"/bookings": {"fail_after_work": 10}})
    with pytest.raises(ExecutionError, match="failed after 3 attempts: HTTP 500"):
        executor.call("book_table", {"availability_id": "a9", "contact_name": "Bo", "contact_phone": "2"})
    assert len(api.attempts()) == 3


def test_a_server_that_is_not_there_fails_with_the_reason():
    executor = HttpExecutor(load_pack("restaurant_reservation"), base_url=f"http://127.0.0.1:{free_port()}",
                            retries=1, backoff_s=0.01)
    with pytest.raises(ExecutionError, match="cannot reach"):
        executor.call("find_restaurant", {"restaurant_name": "Bella Notte"})


@pytest.fixture
def http_session(api, monkeypatch):
    api.faults()
    for name, value in {"http_base_url": api.url, "http_timeout_s": 1.0, "http_retries": 1}.items():
        monkeypatch.setattr(settings(), name, value)
    engine = SessionEngine("hf", executor="http")
    return engine, engine.open("restaurant_reservation", "2025-03-10")


def test_a_session_books_through_the_api_with_normalised_values(api, http_session):
    engine, state = http_session
    before = len(api.rows("bookings"))
    reply = engine.reply(state, OPENING)
    for _ in range(4):  # the agent asks for what the opening left out
        if reply.kind == "ask":
            assert reply.slot in ANSWERS, reply
            reply = engine.reply(state, ANSWERS[reply.slot])
    assert reply.kind == "confirm" and len(api.rows("bookings")) == before  # read back: nothing booked yet
    reply = engine.reply(state, "yes")
    assert reply.kind == "done", reply
    booked = api.rows("bookings")
    assert len(booked) == before + 1
    availability = dict((row[0], row[1:]) for row in api.rows("availability"))[booked[-1][2]]
    assert availability == ("r2", 4, "03/14/2025", "19:00")
    assert booked[-1][3:] == ("Ana Lopez", "617-555-0199")
    assert [c.output for c in state.executed][-1] == booked[-1][0]  # the session keeps what the API returned


def test_a_timeout_fails_the_session_with_its_reason_and_nothing_after_it_runs(api, http_session):
    engine, state = http_session
    before = len(api.rows("bookings"))
    api.faults(**{"/restaurants/r2/availability": {"delay_s": 3}})
    reply = engine.reply(state, OPENING)
    while reply.kind in ("ask", "confirm"):
        reply = engine.reply(state, "yes" if reply.kind == "confirm" else ANSWERS[reply.slot])
    assert reply.kind == "fail" and "check_availability failed after 2 attempts: no answer within 1 s" in reply.text
    assert [c.api for c in state.executed] == ["find_restaurant"]  # what ran before the failure, nothing after
    assert state.ended == "fail" and len(api.rows("bookings")) == before
