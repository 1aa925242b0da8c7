"""Who may call the API, and how much.

Keys: `Authorization: Bearer KEY`, from NESYPLAN_API_KEYS (comma-separated) and NESYPLAN_API_KEYS_FILE (one
per line). A key may be given as its SHA-256 (`sha256:<hex>`, or 64 hex digits in the file), so a key file
need not hold the keys themselves. Only digests are kept; a presented key's digest is compared with every
one in constant time, and no key is ever logged. A caller is known by its key's id (the first 16 hex digits
of the digest): runs and sessions belong to it. With no key configured every caller is `local`, and
`nesyplan serve` refuses any address but loopback.

Limits: a token bucket per key in Redis (one Lua script, so concurrent API processes share it) -> 429 with
Retry-After; failed keys per client address (past their burst the address is refused for a while, the
right key too); a body size limit (413, `BodyLimit`).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import math
import re
from functools import lru_cache
from pathlib import Path

from fastapi import Depends, HTTPException, Request
from fastapi.responses import JSONResponse
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from pipeline.settings import settings

LOCAL = "local"
_HEX_DIGEST = re.compile(r"(?:sha256:)?([0-9a-fA-F]{64})")
_bearer = HTTPBearer(auto_error=False, description="an API key (NESYPLAN_API_KEYS)")


class KeyConfigError(Exception):
    """The key settings cannot be read (a missing key file), or hold a placeholder."""


# What example files put where a secret goes (.env.example's `change-me`): a service started with one as
# it is would be open to anyone who read the example.
PLACEHOLDER_SECRETS = ("change-me", "changeme", "change_me", "replace-me", "your-key-here", "secret", "password")


LOOPBACK_NAMES = {"localhost", "127.0.0.1", "::1"}


def allowed_hosts() -> list[str]:
    """The Host names the API answers (NESYPLAN_ALLOWED_HOSTS)."""
    return [h.strip() for h in settings().allowed_hosts.split(",") if h.strip()] or ["localhost"]


def placeholder_problem(url: str) -> str | None:
    """What is wrong with a connection URL's password, if it is a placeholder (else None)."""
    from urllib.parse import urlsplit

    try:
        password = urlsplit(url).password
    except ValueError:
        return None
    if password and password.lower() in PLACEHOLDER_SECRETS:
        return f"the Redis password is the placeholder {password!r}: set a real one (REDIS_PASSWORD in .env)"
    return None


def _digest(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def _parse(entry: str, hashed_bare_hex: bool) -> str | None:
    entry = entry.strip()
    if not entry or entry.startswith("#"):
        return None
    match = _HEX_DIGEST.fullmatch(entry)
    if match and (entry.startswith("sha256:") or hashed_bare_hex):
        return match.group(1).lower()
    return _digest(entry)


@lru_cache(maxsize=1)
def key_digests() -> tuple[str, ...]:
    """The digests of every configured key (empty: no key configured)."""
    s = settings()
    digests = [_parse(entry, hashed_bare_hex=False) for entry in s.api_keys.split(",")]
    if s.api_keys_file:
        try:
            lines = Path(s.api_keys_file).read_text(encoding="utf-8").splitlines()
        except OSError as exc:
            raise KeyConfigError(f"cannot read NESYPLAN_API_KEYS_FILE: {exc}") from None
        digests += [_parse(line, hashed_bare_hex=True) for line in lines]
    placeholders = {_digest(p): p for p in PLACEHOLDER_SECRETS}
    for digest in digests:
        if digest in placeholders:
            raise KeyConfigError(f"an API key is the placeholder {placeholders[digest]!r}: replace it with a real "
                                 f"key (python3 -c 'import secrets; print(secrets.token_urlsafe(32))')")
    return tuple(sorted({d for d in digests if d}))


def key_id(key: str) -> str | None:
    """The id of a configured key, or None; every digest is compared, each in constant time."""
    presented = _digest(key)
    found = None
    for digest in key_digests():
        if hmac.compare_digest(presented, digest):
            found = digest
    return found[:16] if found else None


_BUCKET = """
local now = redis.call('TIME')
local t = tonumber(now[1]) + tonumber(now[2]) / 1e6
local rate, burst = tonumber(ARGV[1]), tonumber(ARGV[2])
local state = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(state[1]) or burst
local at = tonumber(state[2]) or t
tokens = math.min(burst, tokens + math.max(0, t - at) * rate)
local wait = 0
if tokens >= 1 then tokens = tokens - 1 else wait = (1 - tokens) / rate end
redis.call('HSET', KEYS[1], 'tokens', tokens, 'at', t)
redis.call('EXPIRE', KEYS[1], math.ceil(burst / rate) + 1)
return tostring(wait)
"""


@lru_cache(maxsize=4)
def _bucket_script(client):
    return client.register_script(_BUCKET)


def _wait(bucket: str, rate: float, burst: int) -> float:
    """Take a token from a bucket; the seconds until one is there when there is none (0: taken)."""
    from workers.tasks import store

    return float(_bucket_script(store().client)(keys=[f"nesyplan:rate:{bucket}"], args=[rate, burst]))


def rate_limit(caller: str) -> None:
    s = settings()
    if s.rate_limit_per_s <= 0:
        return
    wait = _wait(caller, s.rate_limit_per_s, s.rate_burst)
    if wait > 0:
        raise HTTPException(status_code=429, detail=f"rate limit: {s.rate_limit_per_s:g} requests/s "
                                                    f"(burst {s.rate_burst}) per key",
                            headers={"Retry-After": str(max(1, math.ceil(wait)))})


def address(request: Request) -> str:
    return request.client.host if request.client else "unknown"


def refused_address(request: Request) -> None:
    """429 while the address is refused for guessing keys; no key is even looked at."""
    from workers.tasks import store

    left = store().client.ttl(f"nesyplan:authblock:{address(request)}")
    if left and left > 0:
        raise HTTPException(status_code=429, detail="too many failed keys from this address",
                            headers={"Retry-After": str(left)})


def count_failed_key(request: Request) -> None:
    """A wrong or missing key, counted against the client's address: past the burst, the address is refused
    (any key, the right one too) until its bucket has a token again, so keys cannot be guessed quickly."""
    from workers.tasks import store

    s = settings()
    if s.auth_fail_per_s <= 0:
        return
    wait = _wait(f"authfail:{address(request)}", s.auth_fail_per_s, s.auth_fail_burst)
    if wait > 0:
        seconds = max(1, math.ceil(wait))
        store().client.set(f"nesyplan:authblock:{address(request)}", 1, ex=seconds)
        raise HTTPException(status_code=429, detail="too many failed keys from this address",
                            headers={"Retry-After": str(seconds)})


def caller(request: Request, credentials: HTTPAuthorizationCredentials | None = Depends(_bearer)) -> str:
    """The caller's key id (401 without a configured key when keys are configured), within its rate."""
    if not key_digests():
        who = LOCAL
    else:
        refused_address(request)
        who = key_id(credentials.credentials) if credentials is not None else None
        if who is None:
            count_failed_key(request)
            raise HTTPException(status_code=401, detail="a valid API key is required (Authorization: Bearer KEY)",
                                headers={"WWW-Authenticate": "Bearer"})
    rate_limit(who)
    return who


MAX_HEADER_BYTES = 16384


class BodyLimit:
    """ASGI middleware: request headers over MAX_HEADER_BYTES get 431; a request body over `max_bytes` gets 413, by its Content-Length or by reading it
    up to the limit; a JSON body that is not text (undecodable bytes, or a lone UTF-16 surrogate such as
    "\\ud800", which no store can write) gets 400. The app then reads the buffered body."""

    def __init__(self, app, max_bytes: int, larger: dict[str, int] | None = None):
        self.app, self.max_bytes, self.larger = app, max_bytes, larger or {}

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        if sum(len(k) + len(v) for k, v in scope["headers"]) > MAX_HEADER_BYTES:
            too_many = JSONResponse(status_code=431, content={"detail": f"request headers over {MAX_HEADER_BYTES} bytes"})
            return await too_many(scope, receive, send)
        max_bytes = self.larger.get(scope.get("path", ""), self.max_bytes)  # an upload's path may take more
        too_large = JSONResponse(status_code=413, content={"detail": f"request body over {max_bytes} bytes"})
        headers = dict(scope["headers"])
        length = headers.get(b"content-length")
        if length is not None and (not length.isdigit() or int(length) > max_bytes):
            return await too_large(scope, receive, send)
        body, more = b"", True
        while more:
            message = await receive()
            if message["type"] != "http.request":
                return await self.app(scope, receive, send)  # the client went away: the app sees it
            body += message.get("body", b"")
            more = message.get("more_body", False)
            if len(body) > max_bytes:
                return await too_large(scope, receive, send)
        if b"json" in headers.get(b"content-type", b"") and not _is_text(body):
            bad = JSONResponse(status_code=400, content={"detail": "the body is not valid Unicode text (undecodable "
                                                                   "bytes or a lone UTF-16 surrogate)"})
            return await bad(scope, receive, send)
        sent = False

        async def replay():
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)


def _is_text(body: bytes) -> bool:
    """Whether a JSON body decodes as UTF-8 and every string in it is encodable (no lone surrogate); a body
    that is no JSON at all is left to the app (422)."""
    try:
        value = json.loads(body.decode("utf-8"))
    except UnicodeDecodeError:
        return False
    except ValueError:
        return True
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                return False
        elif isinstance(item, dict):
            stack += [*item.keys(), *item.values()]
        elif isinstance(item, list):
            stack += item
    return True


class SecurityHeaders:
    """ASGI middleware: every answer says how a browser may use it. The pages load nothing but this
    server's own stylesheet (no script at all), so the policy is strict; the interactive API docs load
    Swagger's script, so they only get the frame and sniffing rules."""

    STRICT = ("default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'none'; "
              "frame-ancestors 'none'; base-uri 'none'; form-action 'self'")
    DOCS = "frame-ancestors 'none'"

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        docs = scope.get("path", "").startswith(("/docs", "/redoc"))
        extra = [(b"content-security-policy", (self.DOCS if docs else self.STRICT).encode()),
                 (b"x-content-type-options", b"nosniff"), (b"referrer-policy", b"same-origin"),
                 (b"x-frame-options", b"DENY")]

        async def with_headers(message):
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *extra]
            await send(message)

        await self.app(scope, receive, with_headers)
