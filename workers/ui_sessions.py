"""Signing in to the web page: the cookie holds a random session id, never the API key.

A session is a Redis key (the id's SHA-256, so a copy of the database gives no usable cookie) holding the
caller's key id, expiring after `ui_session_s`. Logging out deletes it; a key removed from the server's
configuration ends its sessions at their next page.
"""

from __future__ import annotations

import hashlib
import secrets

from pipeline.settings import settings

PREFIX = "nesyplan:ui_session:"


def _key(session_id: str) -> str:
    return PREFIX + hashlib.sha256(session_id.encode()).hexdigest()


def open_session(client, who: str) -> str:
    """A new session for this caller; returns its id (for the cookie)."""
    session_id = secrets.token_urlsafe(32)
    client.set(_key(session_id), who, ex=settings().ui_session_s)
    return session_id


def caller_of(client, session_id: str) -> str | None:
    """The caller a session id belongs to, or None (unknown, expired, logged out)."""
    if not session_id:
        return None
    who = client.get(_key(session_id))
    return who.decode() if isinstance(who, bytes) else who


def close_session(client, session_id: str) -> None:
    if session_id:
        client.delete(_key(session_id))
