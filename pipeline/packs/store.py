"""The pack store: versions every worker on any host reads, kept in Redis (it is there already).

Two parts, so that the bytes can move to an object store without the rest changing:
- `Blobs`: a version's files by digest (content-addressed, written once, never changed);
- `PackStore`: per tenant (an API key's id), each pack name's versions in upload order, the active one,
  and the activations before it (what `rollback` goes back to).

Workers load a version by digest (`pipeline.packs.versions.load_version`) and keep it on their disk; a
Run records the digest its stages use, so activating another version changes new runs only.
"""

from __future__ import annotations

import json
import time
import zlib
from functools import lru_cache
from typing import Literal, Protocol, get_args

import redis
from pydantic import BaseModel, Field

from pipeline.packs.pack import NAME, Pack, PackError, pack_names
from pipeline.packs.versions import PackFiles, installed_digest, installed_files, load_version, version_digest
from pipeline.settings import settings

PREFIX = "nesyplan:packs:"
KeyPart = Literal["versions", "order", "active", "history"]  # the keys of a tenant's pack in Redis


class PackStoreError(Exception):
    """A version or a pack name the store does not hold (for this tenant)."""


class Blobs(Protocol):
    def put(self, digest: str, files: PackFiles) -> None: ...

    def get(self, digest: str) -> PackFiles | None: ...


class RedisBlobs:
    """Versions' files in Redis: one compressed JSON value per digest, with no expiry."""

    def __init__(self, client: redis.Redis):
        self.client = client

    def put(self, digest: str, files: PackFiles) -> None:
        payload = json.dumps({path: content.decode("utf-8") for path, content in files.items()}, sort_keys=True)
        self.client.set(f"{PREFIX}blob:{digest}", zlib.compress(payload.encode("utf-8")), nx=True)

    def get(self, digest: str) -> PackFiles | None:
        raw = self.client.get(f"{PREFIX}blob:{digest}")
        if raw is None:
            return None
        return {path: text.encode("utf-8") for path, text in json.loads(zlib.decompress(raw)).items()}


class PackVersion(BaseModel):
    name: str
    digest: str
    created: float = Field(description="when it was stored (seconds since the epoch)")
    source: str = Field("", description="what it was made from: an OpenAPI document, an SGD schema, an archive")
    active: bool = False


class PackStore:
    """Each tenant's packs: versions, the active one, the history of activations."""

    def __init__(self, client: redis.Redis, blobs: Blobs | None = None):
        self.client = client
        self.blobs = blobs or RedisBlobs(client)

    def _key(self, tenant: str, name: str, part: KeyPart) -> str:
        return f"{PREFIX}{tenant}:{name}:{part}"

    def add(self, tenant: str, name: str, files: PackFiles, source: str = "", activate: bool = True) -> PackVersion:
        """Store a version of the tenant's pack `name` (the same files twice are one version) and, with
        `activate` or when it is the pack's first, make it the active one."""
        digest = version_digest(files)
        self.blobs.put(digest, files)
        versions = self._key(tenant, name, "versions")
        record = PackVersion(name=name, digest=digest, created=time.time(), source=source)
        if self.client.hsetnx(versions, digest, record.model_dump_json(exclude={"active"})):
            self.client.rpush(self._key(tenant, name, "order"), digest)
        self.client.sadd(f"{PREFIX}{tenant}:names", name)
        if activate or self.active(tenant, name) is None:
            self.activate(tenant, name, digest)
        return self.version(tenant, name, digest)

    def names(self, tenant: str) -> list[str]:
        return sorted(n.decode() for n in self.client.smembers(f"{PREFIX}{tenant}:names"))

    def active(self, tenant: str, name: str) -> str | None:
        digest = self.client.get(self._key(tenant, name, "active"))
        return digest.decode() if digest else None

    def version(self, tenant: str, name: str, digest: str) -> PackVersion:
        raw = self.client.hget(self._key(tenant, name, "versions"), digest)
        if raw is None:
            raise PackStoreError(f"pack {name!r} has no version {digest[:12]}")
        return PackVersion.model_validate_json(raw).model_copy(update={"active": digest == self.active(tenant, name)})

    def versions(self, tenant: str, name: str) -> list[PackVersion]:
        """The pack's versions, oldest first; empty when the tenant has no pack of that name."""
        order = [d.decode() for d in self.client.lrange(self._key(tenant, name, "order"), 0, -1)]
        records, active = self.client.hgetall(self._key(tenant, name, "versions")), self.active(tenant, name)
        return [PackVersion.model_validate_json(records[digest.encode()]).model_copy(update={"active": digest == active})
                for digest in order]

    def activate(self, tenant: str, name: str, digest: str) -> PackVersion:
        """Make one of the pack's versions the one new runs use; the one it replaces is remembered."""
        self.version(tenant, name, digest)  # raises for a version the pack does not have
        active, history = self._key(tenant, name, "active"), self._key(tenant, name, "history")
        with self.client.pipeline() as pipe:
            while True:
                try:
                    pipe.watch(active)
                    before = pipe.get(active)
                    pipe.multi()
                    pipe.set(active, digest)
                    if before is not None and before.decode() != digest:
                        pipe.rpush(history, before)
                    pipe.execute()
                    break
                except redis.WatchError:
                    continue  # another activation came in between: read the active version again
        return self.version(tenant, name, digest)

    def rollback(self, tenant: str, name: str) -> PackVersion:
        """Make active again the version that was active before the current one."""
        active, history = self._key(tenant, name, "active"), self._key(tenant, name, "history")
        with self.client.pipeline() as pipe:
            while True:
                try:
                    pipe.watch(active, history)
                    before = pipe.lindex(history, -1)
                    if before is None:
                        raise PackStoreError(f"pack {name!r} has no earlier active version to roll back to")
                    pipe.multi()
                    pipe.set(active, before)
                    pipe.rpop(history)
                    pipe.execute()
                    return self.version(tenant, name, before.decode())
                except redis.WatchError:
                    continue

    def remove(self, tenant: str, name: str) -> bool:
        """Forget the tenant's pack of that name (its versions' files stay: a run made on one still runs)."""
        keys = [self._key(tenant, name, part) for part in get_args(KeyPart)]
        with self.client.pipeline() as pipe:
            pipe.delete(*keys)
            pipe.srem(f"{PREFIX}{tenant}:names", name)
            return bool(pipe.execute()[0])

    def files(self, digest: str) -> PackFiles | None:
        return self.blobs.get(digest)


def stored_or_installed(store: PackStore, tenant: str, name: str) -> str:
    """The digest new runs of `name` use for a tenant: the active version of its own pack of that name,
    else the installed (shared) pack's, whose files are put in the store too, so that a worker on a host
    with another copy on its disk runs this one. PackError when neither exists."""
    valid = bool(NAME.fullmatch(name or ""))
    digest = store.active(tenant, name) if valid else None
    if digest is not None:
        return digest
    digest = installed_digest(name) if valid else None
    if digest is None:
        known = ", ".join(sorted({*pack_names(), *store.names(tenant)})) or "none"
        raise PackError(f"unknown domain {name!r} (available: {known})")
    if digest not in _shared_put:
        store.blobs.put(digest, installed_files(name))
        _shared_put.add(digest)
    return digest


_shared_put: set[str] = set()  # installed versions this process has put in the store


@lru_cache(maxsize=4)
def _store_at(url: str) -> PackStore:
    return PackStore(redis.Redis.from_url(url))


def default_store() -> PackStore:
    """The store on the configured Redis (NESYPLAN_REDIS_URL)."""
    return _store_at(settings().redis_url)


def load_pack_version(name: str, digest: str | None) -> Pack:
    """The pack at the version a Run or a session recorded: installed, kept on this machine, or fetched
    from the store (only then is Redis asked)."""
    def fetch(wanted: str) -> PackFiles | None:
        try:
            return default_store().files(wanted)
        except redis.exceptions.RedisError as exc:
            raise PackError(f"pack {name!r} version {wanted[:12]} is not on this machine and the pack store is "
                            f"unreachable ({type(exc).__name__})") from None
    return load_version(name, digest, fetch)
