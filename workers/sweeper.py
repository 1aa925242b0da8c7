"""Nothing accepted is lost: runs and session turns still open past a deadline are sent again.

A message can be lost between the API and a worker: Redis restarted without it, a stage retried onto a
broker that was away, a worker killed with the message in hand and the broker's own redelivery far off.
So every run and every turn is tracked from the moment it is accepted (`nesyplan:open:runs`,
`nesyplan:open:turns`: id -> when it last moved) until it ends. Each worker looks every `sweep_interval_s`
(one at a time, under a lock) for those that have not moved for `sweep_after_s` and sends the rest of
their work again. Every stage is idempotent (a stage already in the Run is skipped; a turn already
written is not written twice), so a message that was only late costs one duplicate that does nothing.
After `max_resends` a run that still does not move is failed with that reason, so it ends, either way.

A worker killed with a message in hand is caught sooner than that. While a task runs, its run or turn is
*held* (`nesyplan:held`: item -> the worker's name and the instance id its heartbeat carries). A hold whose
worker's heartbeat is gone, or now carries another instance's id (the same name restarted), is an orphan:
the sweep sends its work again at once instead of waiting `sweep_after_s` or the broker's visibility
timeout. A message that kills every worker that takes it is still failed after `max_resends`. A task that
fails because Redis went away marks its item lost (as soon as Redis answers again): Celery drops a message
whose retry it cannot publish, and the broker would give it back only after its visibility timeout.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from contextlib import contextmanager

import redis

from pipeline.observability import metrics
from pipeline.records import Failure
from pipeline.settings import settings
from workers.store import HEARTBEAT_PREFIX

log = logging.getLogger(__name__)
OPEN_RUNS = "nesyplan:open:runs"
OPEN_TURNS = "nesyplan:open:turns"
RESENDS = "nesyplan:resends"
LOCK = "nesyplan:sweeper"
HELD = "nesyplan:held"


# Let go of a hold only if it is still the one given (a retry of the same task, received meanwhile, holds
# the item under another delivery and keeps it).
_RELEASE = """
if redis.call('HGET', KEYS[1], ARGV[1]) == ARGV[2] then return redis.call('HDEL', KEYS[1], ARGV[1]) end
return 0
"""


def holder(worker: str, instance: str, task_id: str, retries: int) -> str:
    """Who has a message in hand: `<worker> <instance> <delivery>`, the worker's name, the instance id its
    heartbeat carries, and which delivery of the task this is (its id and retry count)."""
    return f"{worker} {instance} {task_id}.{retries}"


def _parts(held_by: str) -> tuple[str, str, str]:
    """A holder's worker, instance and delivery (`LOST` gives a worker no heartbeat names)."""
    worker, instance, delivery = held_by.split(" ", 2)
    return worker, instance, delivery


def hold(client: redis.Redis, item: str, held_by: str) -> None:
    """`item` (`run:<id>`, or `turn:<session>:<turn>`) is in the hands of `held_by` (see `holder`)."""
    client.hset(HELD, item, held_by)


@contextmanager
def holding(client: redis.Redis, item: str, held_by: str):
    """A task has `item` in hand while the block runs. A task that fails because Redis went away leaves
    the item marked lost: its retry may never have reached the broker (Celery drops a message whose retry
    it cannot publish), and a worker that lived through the outage would otherwise hold it for good."""
    try:
        hold(client, item, held_by)
        yield
    except (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError):
        mark_lost(client, item)
        raise
    except BaseException:  # the task failed or waits (a retry): its message is the broker's again
        _release(client, item, held_by)
        raise
    _release(client, item, held_by)


def _release(client: redis.Redis, item: str, held_by: str) -> None:
    try:
        client.register_script(_RELEASE)(keys=[HELD], args=[item, held_by])
    except redis.exceptions.RedisError:
        mark_lost(client, item)  # Redis away: unsure what became of it, so sent again (a duplicate changes nothing)


LOST = "(lost) - -"  # a holder no worker is: the next sweep sends the item again
_unmarked: set[str] = set()
_unmarked_lock = threading.Lock()


def mark_lost(client: redis.Redis, item: str) -> None:
    """Mark an item lost now, or, with Redis away, as soon as it answers again (a thread of this process
    tries every second)."""
    try:
        client.hset(HELD, item, LOST)
        return
    except redis.exceptions.RedisError:
        pass
    with _unmarked_lock:
        first = not _unmarked
        _unmarked.add(item)
    if first:
        threading.Thread(target=_mark_when_back, args=(client,), name="nesyplan-lost", daemon=True).start()


def _mark_when_back(client: redis.Redis) -> None:
    while True:
        time.sleep(1)
        with _unmarked_lock:
            items = sorted(_unmarked)
        try:
            client.hset(HELD, mapping={item: LOST for item in items})
        except redis.exceptions.RedisError:
            continue
        with _unmarked_lock:
            _unmarked.difference_update(items)
            if not _unmarked:
                return


# Mark lost every item whose holder starts with ARGV[1] (one worker instance's holds).
_LOSE_ALL = """
local lost = 0
local held = redis.call('HGETALL', KEYS[1])
for i = 1, #held, 2 do
  if string.sub(held[i + 1], 1, #ARGV[1]) == ARGV[1] then
    redis.call('HSET', KEYS[1], held[i], ARGV[2])
    lost = lost + 1
  end
end
return lost
"""


def lose_holds_of(client: redis.Redis, worker: str, instance: str) -> int:
    """After Redis was away or restarted, what a worker held may have been dropped with its connection (a
    message it had taken but not started, a retry or a next stage it could not send): all of it is sent
    again, and a task still running makes a duplicate that changes nothing. How many were marked."""
    every_delivery = f"{worker} {instance} "  # how every holder() of this instance begins
    return int(client.register_script(_LOSE_ALL)(keys=[HELD], args=[every_delivery, LOST]))


# Let go of the holds given (item, holder, item, holder, ...) that still have that holder: an item taken
# again by a live worker since they were read keeps its new hold. Returns the items let go.
_LET_GO = """
local gone = {}
for i = 1, #ARGV, 2 do
  if redis.call('HGET', KEYS[1], ARGV[i]) == ARGV[i + 1] then
    redis.call('HDEL', KEYS[1], ARGV[i])
    table.insert(gone, ARGV[i])
  end
end
return gone
"""


def take_orphans(client: redis.Redis) -> list[str]:
    """Let go of the items held by a worker no longer alive (no heartbeat, or another instance's) and
    return them: their work is to be sent again."""
    held = {item.decode(): held_by.decode() for item, held_by in client.hgetall(HELD).items()}
    parts = {item: _parts(held_by) for item, held_by in held.items()}
    workers = sorted({worker for worker, _, _ in parts.values()})
    alive = dict(zip(workers, client.mget([HEARTBEAT_PREFIX + w for w in workers]))) if workers else {}
    dead = [(item, held[item]) for item, (worker, instance, _) in parts.items()
            if (alive.get(worker) or b"").decode() != instance]
    if not dead:
        return []
    gone = client.register_script(_LET_GO)(keys=[HELD], args=[part for pair in dead for part in pair])
    return [item.decode() for item in gone]


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


SUSPECTS = "nesyplan:suspects"  # items whose message was found nowhere by the last sweep
QUEUES = ("llm", "symbolic")
MOST_TO_READ = 10_000  # queues longer than this are not read: the stale horizon covers them


def nowhere(client: redis.Redis, unacked_key: str, quiet_s: float, now: float) -> list[str]:
    """Runs and turns that have not moved for `quiet_s` and whose message is nowhere: not held, not in a
    queue, not taken from one. Kombu's Redis transport loses a message it took from its list at the moment
    Redis went away (the take is done, the record of it never written). A message is found by its run or
    session id in the task's headers."""
    quiet = now - quiet_s
    runs = [r.decode() for r in client.zrangebyscore(OPEN_RUNS, 0, quiet, start=0, num=200)]
    turns = [t.decode() for t in client.zrangebyscore(OPEN_TURNS, 0, quiet, start=0, num=200)]
    if not (runs or turns) or sum(client.llen(queue) for queue in QUEUES) > MOST_TO_READ:
        return []
    held = {item.decode() for item in client.hkeys(HELD)}
    messages = b"\n".join([raw for queue in QUEUES for raw in client.lrange(queue, 0, -1)]
                          + client.hvals(unacked_key)).decode(errors="replace")
    return ([f"run:{r}" for r in runs if f"run:{r}" not in held and r not in messages]
            + [f"turn:{t}" for t in turns if f"turn:{t}" not in held and t.rpartition(":")[0] not in messages])


def confirmed_nowhere(client: redis.Redis, unacked_key: str, quiet_s: float, now: float) -> list[str]:
    """`nowhere` twice in a row, one sweep apart: a message between its take and the record of it is
    nowhere for a moment, never for a whole sweep interval."""
    found = nowhere(client, unacked_key, quiet_s, now)
    before = {item.decode() for item in client.hkeys(SUSPECTS)}
    confirmed = [item for item in found if item in before]
    with client.pipeline() as pipe:
        pipe.delete(SUSPECTS)
        suspects = {item: now for item in found if item not in confirmed}
        if suspects:
            pipe.hset(SUSPECTS, mapping=suspects)
        pipe.execute()
    return confirmed


def sweep(runs, sessions, resend_run, resend_turn, now: float | None = None,
          unacked_key: str | None = None) -> dict[str, int]:
    """Send again what a dead worker held, what was lost (with the broker's `unacked_key`, what is nowhere
    two sweeps in a row), and what has not moved for `sweep_after_s`; fail runs sent `max_resends` times.
    `runs` and `sessions` are the stores, `resend_run(run_id, stages)` and `resend_turn(session_id, turn)`
    send work. Returns how many runs and turns were sent again, runs failed, orphans and lost found."""
    s, client, now = settings(), runs.client, now or time.time()
    stale = now - s.sweep_after_s
    counts = {"runs_resent": 0, "runs_failed": 0, "turns_resent": 0, "orphans": 0, "nowhere": 0}
    lost = take_orphans(client)
    counts["orphans"] = len(lost)
    if unacked_key is not None:
        missing = confirmed_nowhere(client, unacked_key, s.sweep_interval_s * 2, now)
        counts["nowhere"] = len(missing)
        lost += missing
    stale_runs = [raw.decode() for raw in client.zrangebyscore(OPEN_RUNS, 0, stale, start=0, num=200)]
    stale_turns = [raw.decode() for raw in client.zrangebyscore(OPEN_TURNS, 0, stale, start=0, num=200)]
    for run_id in dict.fromkeys([item.removeprefix("run:") for item in lost if item.startswith("run:")]
                                + stale_runs):
        run = runs.load(run_id)
        if run is None or run.status in ("succeeded", "failed"):
            ended(client, run_id)
            continue
        left = stages_left(run)
        if client.hincrby(RESENDS, run_id, 1) > s.max_resends:
            run.status = "failed"
            run.failure = Failure(stage=next(iter(left), "plan"), kind="internal",
                                  message=f"the run did not move after being sent {s.max_resends} more times")
            runs.save(run)
            metrics.run_ended(run, run.failure.stage)
            ended(client, run_id)
            counts["runs_failed"] += 1
            continue
        resend_run(run_id, left)
        moved(client, run_id)
        counts["runs_resent"] += 1
    for raw in dict.fromkeys([item.removeprefix("turn:") for item in lost if item.startswith("turn:")]
                             + stale_turns):
        session_id, _, turn = raw.rpartition(":")
        state = sessions.load(session_id)
        if state is None or len(state.turns) > int(turn) or client.hincrby(RESENDS, raw, 1) > s.max_resends:
            turn_ended(client, session_id, int(turn))  # written, expired, or given up (the wait says so)
            continue
        resend_turn(session_id, int(turn))
        turn_moved(client, session_id, int(turn))
        counts["turns_resent"] += 1
    if any(counts.values()):
        log.warning("sweeper: %s (sent again at once: %s)", counts, ", ".join(lost) or "none")
    return counts


def stages_left(run) -> list[str]:
    """The stages a run has still to run (none once it has ended)."""
    from pipeline.run import stages_of

    if run.status in ("succeeded", "failed"):
        return []
    return [stage for stage in stages_of(run) if stage not in run.timings_ms]


def restore_unheld(channel, older_than_s: float) -> int:
    """Give back to its queue every message taken from the broker more than `older_than_s` ago that no
    worker holds; how many. A worker holds what it takes from the moment it receives it, so such a message
    was lost with its worker's connection (Redis went away between the take and the receipt) and would
    otherwise wait for the visibility timeout. `channel`: a kombu Redis channel (its own restore is used)."""
    client = channel.client
    held = {_parts(held_by.decode())[2] for held_by in client.hvals(HELD)}
    restored = 0
    for tag in client.zrangebyscore(channel.unacked_index_key, 0, time.time() - older_than_s, start=0, num=200):
        raw = client.hget(channel.unacked_key, tag)
        if raw is None:
            continue  # acknowledged meanwhile
        headers = json.loads(raw)[0].get("headers") or {}
        if f"{headers.get('id')}.{headers.get('retries') or 0}" in held:
            continue
        channel.qos.restore_by_tag(tag.decode(), client=client)
        restored += 1
    if restored:
        log.warning("sweeper: %d message(s) taken but held by no worker given back to their queues", restored)
    return restored


def sweep_if_first(runs, sessions, resend_run, resend_turn, channel=None) -> dict[str, int] | None:
    """Sweep unless another worker is sweeping now; with a broker channel, give back what no one holds."""
    client = runs.client
    if not client.set(LOCK, "1", nx=True, ex=max(5, int(settings().sweep_interval_s * 2))):
        return None
    try:
        counts = sweep(runs, sessions, resend_run, resend_turn,
                       unacked_key=channel.unacked_key if channel is not None else None)
        if channel is not None:
            counts["given_back"] = restore_unheld(channel, settings().sweep_interval_s * 2)
        return counts
    finally:
        client.delete(LOCK)
