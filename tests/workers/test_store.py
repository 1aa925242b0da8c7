"""The session store on real Redis: a reply's waiter is woken by the write of its turn, not by polling."""

import os
import threading
import time

import redis

from pipeline.sessions.records import Reply, SessionState, Turn
from workers.store import SESSION_PREFIX, SessionStore


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


def test_an_owners_list_is_newest_first_per_owner_and_leaves_out_what_expired():
    url = os.environ["NESYPLAN_REDIS_URL"]
    redis.Redis.from_url(url).flushdb()
    store = SessionStore(url)
    states = [SessionState(domain="quickbooks", today="2024-10-15") for _ in range(3)]
    for state in states:
        store.save(state)
        store.index("ann", state.id)
        time.sleep(0.01)  # the list is ordered by the time each was indexed
    other = SessionState(domain="quickbooks", today="2024-10-15")
    store.save(other)
    store.index("bob", other.id)
    assert [s.id for s in store.recent("ann")] == [s.id for s in reversed(states)]
    assert [s.id for s in store.recent("ann", 2)] == [states[2].id, states[1].id]
    redis.Redis.from_url(url).delete(SESSION_PREFIX + states[1].id)  # as its TTL would
    assert [s.id for s in store.recent("ann")] == [states[2].id, states[0].id]
    assert [s.id for s in store.recent("bob")] == [other.id]
