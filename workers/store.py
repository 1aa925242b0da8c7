"""The stores in Redis: every Run record (written after every stage) and every session (its state, its
inbox of messages in arrival order, and each turn's translation between the turn's two tasks), each kept
for a TTL."""

from __future__ import annotations

import time
from typing import Callable, TypeVar

import redis

from pipeline.records import Run
from pipeline.sessions.commands import TurnInput
from pipeline.sessions.records import SessionState
from pipeline.settings import settings

KEY_PREFIX = "nesyplan:run:"
SESSION_PREFIX = "nesyplan:session:"
T = TypeVar("T")


def _client(url: str | None) -> redis.Redis:
    return redis.Redis.from_url(url or settings().redis_url, socket_connect_timeout=2, socket_timeout=5,
                                health_check_interval=10)


# Check and act in one step, so that concurrent requests (on any number of API processes) cannot all
# pass a check that only one of them should: a capped push onto a list, a capped add to a set.
_CAPPED_PUSH = """
local limit = tonumber(ARGV[2])
if limit > 0 and redis.call('LLEN', KEYS[1]) >= limit then return -1 end
local length = redis.call('RPUSH', KEYS[1], ARGV[1])
redis.call('EXPIRE', KEYS[1], ARGV[3])
return length - 1
"""
_CAPPED_ADD = """
local limit = tonumber(ARGV[2])
if limit > 0 and redis.call('ZCARD', KEYS[1]) >= limit then return 0 end
redis.call('ZADD', KEYS[1], ARGV[4], ARGV[1])
redis.call('EXPIRE', KEYS[1], ARGV[3])
return 1
"""


def capped_add(client: redis.Redis, key: str, member: str, limit: int, ttl_s: int) -> bool:
    """Add a member to an ordered set (scored by when) unless it holds `limit` members already (0: no
    limit); whether it was added."""
    return bool(client.register_script(_CAPPED_ADD)(keys=[key], args=[member, limit, ttl_s, time.time()]))


HEARTBEAT_PREFIX = "nesyplan:heartbeat:"


WORKERS = "nesyplan:workers"  # worker name -> until when its last heartbeat holds


def beat(client: redis.Redis, worker: str, instance: str, ttl_s: float) -> None:
    """A worker says it is alive for the next `ttl_s` seconds, with the id of this start of it (a worker
    restarted under the same name is another instance: what the dead one held is not the new one's)."""
    now = time.time()
    with client.pipeline() as pipe:
        pipe.set(HEARTBEAT_PREFIX + worker, instance, px=int(ttl_s * 1000))
        pipe.zadd(WORKERS, {worker: now + ttl_s})
        pipe.zremrangebyscore(WORKERS, 0, now - 3600)  # workers gone for an hour are dropped by those alive
        pipe.execute()


def live_workers(client: redis.Redis) -> int:
    """How many workers have said they are alive lately: no broadcast, and no scan of the keyspace (which
    holds every stored run), one count over an ordered set (no write: health checks only read)."""
    return client.zcount(WORKERS, time.time(), "+inf")


def _remember(client: redis.Redis, key: str, member: str, ttl_s: int) -> None:
    """Add an id to an owner's list, ordered by time, keeping the newest thousand."""
    with client.pipeline() as pipe:
        pipe.zadd(key, {member: time.time()})
        pipe.zremrangebyrank(key, 0, -1001)
        pipe.expire(key, ttl_s)
        pipe.execute()


def _newest(client: redis.Redis, key: str, count: int, load: Callable[[str], T | None]) -> list[T]:
    """The newest `count` records of an owner's list still stored (an expired one is left out)."""
    ids = [i.decode() for i in client.zrevrange(key, 0, count - 1)]
    return [record for record in map(load, ids) if record is not None]


class RunStore:
    def __init__(self, url: str | None = None, ttl_s: int | None = None):
        self.client = _client(url)
        self.ttl_s = ttl_s or settings().run_ttl_s

    def save(self, run: Run) -> None:
        self.client.set(KEY_PREFIX + run.id, run.model_dump_json(), ex=self.ttl_s)

    def load(self, run_id: str) -> Run | None:
        data = self.client.get(KEY_PREFIX + run_id)
        return Run.model_validate_json(data) if data else None

    def ping(self) -> bool:
        return bool(self.client.ping())

    def index(self, owner: str, run_id: str) -> None:
        """Remember a submitted run under its key, newest first (the web page's list)."""
        _remember(self.client, f"nesyplan:runs-of:{owner}", run_id, self.ttl_s)

    def recent(self, owner: str, count: int = 100) -> list[Run]:
        return _newest(self.client, f"nesyplan:runs-of:{owner}", count, self.load)


class SessionStore:
    """`<prefix><id>`: the state; `:inbox`: the messages, a list whose index is the turn; `:turn:<i>`: the
    translated turn waiting for its symbolic half; `:answered:<i>`: a wake-up once turn i is written;
    `:lock`: held while a turn's state is written."""

    def __init__(self, url: str | None = None, ttl_s: int | None = None):
        self.client = _client(url)
        self.ttl_s = ttl_s or settings().session_ttl_s

    def _key(self, session_id: str, *parts: str) -> str:
        return ":".join([SESSION_PREFIX + session_id, *parts])

    def save(self, state: SessionState) -> None:
        with self.client.pipeline() as pipe:  # the whole session lives (and expires) together
            pipe.set(self._key(state.id), state.model_dump_json(), ex=self.ttl_s)
            pipe.expire(self._key(state.id, "inbox"), self.ttl_s)
            if state.turns:  # wake whoever waits for this turn's reply
                answered = self._key(state.id, "answered", str(len(state.turns) - 1))
                pipe.rpush(answered, 1)
                pipe.expire(answered, self.ttl_s)
            pipe.execute()

    def wait_answered(self, session_id: str, turn: int, timeout_s: float) -> None:
        """Block until the turn's state is written or the timeout passes (the caller then reads the state)."""
        self.client.blpop([self._key(session_id, "answered", str(turn))], timeout=max(timeout_s, 0.01))

    def load(self, session_id: str) -> SessionState | None:
        data = self.client.get(self._key(session_id))
        return SessionState.model_validate_json(data) if data else None

    def post(self, session_id: str, message: str, limit: int = 0) -> int | None:
        """Queue a message; its turn number (messages to one session are turns in arrival order), or None
        when the session has had `limit` messages already (0: no limit)."""
        turn = self.client.register_script(_CAPPED_PUSH)(keys=[self._key(session_id, "inbox")],
                                                         args=[message, limit, self.ttl_s])
        return None if turn < 0 else int(turn)

    def message(self, session_id: str, turn: int) -> str | None:
        data = self.client.lindex(self._key(session_id, "inbox"), turn)
        return data.decode() if data is not None else None

    def queued(self, session_id: str) -> int:
        return self.client.llen(self._key(session_id, "inbox"))

    def save_translation(self, session_id: str, turn_input: TurnInput) -> None:
        self.client.set(self._key(session_id, "turn", str(turn_input.turn)), turn_input.model_dump_json(),
                        ex=self.ttl_s)

    def load_translation(self, session_id: str, turn: int) -> TurnInput | None:
        data = self.client.get(self._key(session_id, "turn", str(turn)))
        return TurnInput.model_validate_json(data) if data else None

    def drop_translation(self, session_id: str, turn: int) -> None:
        self.client.delete(self._key(session_id, "turn", str(turn)))

    def index(self, owner: str, session_id: str) -> None:
        _remember(self.client, f"nesyplan:sessions-of:{owner}", session_id, self.ttl_s)

    def recent(self, owner: str, count: int = 50) -> list[SessionState]:
        return _newest(self.client, f"nesyplan:sessions-of:{owner}", count, self.load)

    def lock(self, session_id: str, timeout_s: float = 300):
        """Held while a turn's symbolic half writes the state (a redelivered copy of it waits, then sees the
        turn done); expires by itself if its holder is killed."""
        return self.client.lock(self._key(session_id, "lock"), timeout=timeout_s, blocking_timeout=timeout_s)
