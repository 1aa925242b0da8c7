"""Nothing accepted is lost: runs and session turns still open past a deadline are sent again.

A message can be lost between the API and a worker: Redis restarted without it, a stage retried onto a
broker that was away, a worker killed with the message in hand and the broker's own redelivery far off.
So every run and every turn is tracked from the moment it is accepted (`nesyplan:open:runs`,
`nesyplan:open:turns`: id -> when it last moved) until it ends. Each worker looks every `sweep_interval_s`
(one at a time, under a lock) for those that have not moved for `sweep_after_s` and sends the rest of
their work again. Every stage is idempotent (a stage already in the Run is skipped; a turn already
written is not written twice), so a message that was only late costs one duplicate that does nothing.
After `max_resends` a run that still does not move is failed with that reason, so it ends, either way.
"""

from __future__ import annotations

import logging
import time

import redis

from pipeline.records import Failure
from pipeline.settings import settings

log = logging.getLogger(__name__)
OPEN_RUNS = "nesyplan:open:runs"
OPEN_TURNS = "nesyplan:open:turns"
RESENDS = "nesyplan:resends"
LOCK = "nesyplan:sweeper"


def moved(client: redis.Redis, run_id: str) -> None:
    """A run was accepted or one of its stages ran: its deadline starts again."""
    client.zadd(OPEN_RUNS, {run_id: time.time()})


def ended(client: redis.Redis, run_id: str) -> None:
    with client.pipeline() as pipe:
        pipe.zrem(OPEN_RUNS, run_id)
        pipe.hdel(RESENDS, run_id)
        pipe.execute()


def turn_moved(client: redis.Redis, session_id: str, turn: int) -> None:
    client.zadd(OPEN_TURNS, {f"{session_id}:{turn}": time.time()})


def turn_ended(client: redis.Redis, session_id: str, turn: int) -> None:
    with client.pipeline() as pipe:
        pipe.zrem(OPEN_TURNS, f"{session_id}:{turn}")
        pipe.hdel(RESENDS, f"{session_id}:{turn}")
        pipe.execute()


def sweep(runs, sessions, resend_run, resend_turn, now: float | None = None) -> dict[str, int]:
    """Send again what has not moved for `sweep_after_s`; fail runs sent `max_resends` times. `runs` and
    `sessions` are the stores, `resend_run(run_id, stages)` and `resend_turn(session_id, turn)` send work.
    Returns how many runs and turns were sent again, and runs failed."""
    s, client = settings(), runs.client
    stale = (now or time.time()) - s.sweep_after_s
    counts = {"runs_resent": 0, "runs_failed": 0, "turns_resent": 0}
    for raw in client.zrangebyscore(OPEN_RUNS, 0, stale, start=0, num=200):
        run_id = raw.decode()
        run = runs.load(run_id)
        if run is None or run.status in ("succeeded", "failed"):
            ended(client, run_id)
            continue
        if client.hincrby(RESENDS, run_id, 1) > s.max_resends:
            run.status = "failed"
            run.failure = Failure(stage=next(iter(_left(run)), "plan"), kind="internal",
                                  message=f"the run did not move after being sent {s.max_resends} more times")
            runs.save(run)
            ended(client, run_id)
            counts["runs_failed"] += 1
            continue
        resend_run(run_id, _left(run))
        moved(client, run_id)
        counts["runs_resent"] += 1
    for raw in client.zrangebyscore(OPEN_TURNS, 0, stale, start=0, num=200):
        session_id, _, turn = raw.decode().rpartition(":")
        state = sessions.load(session_id)
        if state is None or len(state.turns) > int(turn) or client.hincrby(RESENDS, raw, 1) > s.max_resends:
            turn_ended(client, session_id, int(turn))  # written, expired, or given up (the wait says so)
            continue
        resend_turn(session_id, int(turn))
        turn_moved(client, session_id, int(turn))
        counts["turns_resent"] += 1
    if any(counts.values()):
        log.warning("sweeper: %s", counts)
    return counts


def _left(run) -> list[str]:
    from pipeline.run import stages_of

    return [stage for stage in stages_of(run) if stage not in run.timings_ms]


def sweep_if_first(runs, sessions, resend_run, resend_turn) -> dict[str, int] | None:
    """Sweep unless another worker is sweeping now."""
    client = runs.client
    if not client.set(LOCK, "1", nx=True, ex=max(5, int(settings().sweep_interval_s * 2))):
        return None
    try:
        return sweep(runs, sessions, resend_run, resend_turn)
    finally:
        client.delete(LOCK)
