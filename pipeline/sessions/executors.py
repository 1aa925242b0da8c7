"""API execution behind one interface. `simulated`: deterministic outputs from the call itself (an id
made from the API and its arguments), so demos and tests run offline and a repeated call returns the same."""

from __future__ import annotations

import hashlib
import json
from typing import Protocol

from pipeline.packs.pack import Pack


class ExecutionError(Exception):
    """An API call that failed for good; the session ends with `fail` and this message."""


class Executor(Protocol):
    name: str

    def call(self, api: str, args: dict[str, str]) -> str:
        """Carry out one call with its arguments' values (outputs of earlier calls already substituted)."""


class SimulatedExecutor:
    name = "simulated"

    def __init__(self, pack: Pack):
        self.pack = pack

    def call(self, api: str, args: dict[str, str]) -> str:
        if api not in self.pack.spec.apis:
            raise ExecutionError(f"{api} is not an API of {self.pack.name}")
        digest = hashlib.sha256(json.dumps([api, args], sort_keys=True).encode()).hexdigest()[:8]
        return f"{self.pack.spec.apis[api].produces or api}-{digest}"


def get_executor(kind: str, pack: Pack) -> Executor:
    if kind == "simulated":
        return SimulatedExecutor(pack)
    raise ValueError(f"unknown executor {kind!r} (simulated)")
