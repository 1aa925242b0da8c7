"""The session store on real Redis: a reply's waiter is woken by the write of its turn, not by polling."""

import os
import threading
import time

import redis

from pipeline.sessions.records import Reply, SessionState, Turn
from workers.store import SessionStore


def test_a_waiter_wakes_when_its_turn_is_written_and_not_for_another():
    url = os.environ["NESYPLAN_REDIS_URL"]
    redis.Redis.from_url(url).flushdb()
    store = SessionStore(url)
    state = SessionState(domain="quickbooks", today="2024-10-15")
    store.save(state)  # no turn yet: nobody is woken
    writer = threading.Timer(0.3, lambda: (state.turns.append(Turn(message="hi", kind="opening",
                                                                   reply=Reply(kind="fail", text="x"))),
                                           store.save(state)))
    started = time.monotonic()
    writer.start()
    store.wait_answered(state.id, 0, timeout_s=30)
    assert time.monotonic() - started < 15  # woken by the write, long before the timeout
    assert len(store.load(state.id).turns) == 1
    started = time.monotonic()
    store.wait_answered(state.id, 1, timeout_s=0.5)  # turn 1 is not written: the wait runs out
    assert time.monotonic() - started >= 0.4
