"""The LLM stage under load (`nesyplan bench --path llm`, `make gpu-check`): a stream of recorded LLM
inputs (system prompt, request message, grammar) replayed one at a time, then by N concurrent clients;
requests/s, p50/p90 per request, and whether each output equals the one-at-a-time output.

Inputs are recorded once from a dataset (the translate stage's own prompts and grammars) and kept as JSON
lines, so that a machine without the symbolic stack (a bare GPU host) replays exactly what the product sends.
"""

from __future__ import annotations

import json
import queue
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path


@dataclass
class LLMInput:
    id: str
    system: str
    user: str
    grammar: str | None
    max_new_tokens: int = 160


@dataclass
class Replay:
    """One pass over the inputs: each request's output and seconds, the pass's wall time."""
    concurrency: int
    outputs: dict[str, str] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)
    wall_s: float = 0.0
    errors: dict[str, str] = field(default_factory=dict)

    def summary(self) -> dict:
        latencies = sorted(self.seconds.values())
        return {"concurrency": self.concurrency, "requests": len(self.seconds) + len(self.errors),
                "errors": len(self.errors),
                "requests_per_s": round(len(latencies) / self.wall_s, 2) if self.wall_s else None,
                "p50_ms": round(_percentile(latencies, 50) * 1000, 1) if latencies else None,
                "p90_ms": round(_percentile(latencies, 90) * 1000, 1) if latencies else None}


def _percentile(values: list[float], q: float) -> float:
    index = min(len(values) - 1, max(0, round(q / 100 * (len(values) - 1))))
    return values[index]


def save_inputs(inputs: list[LLMInput], path: Path) -> None:
    path.write_text("".join(json.dumps(asdict(item)) + "\n" for item in inputs))


def load_inputs(path: Path) -> list[LLMInput]:
    try:
        return [LLMInput(**json.loads(line)) for line in path.read_text().splitlines() if line.strip()]
    except (ValueError, TypeError) as exc:
        raise ValueError(f"{path}: not LLM inputs as `bench --path llm --save-inputs` writes them ({exc})") from None


def replay(backend, inputs: list[LLMInput], concurrency: int = 1, complete=None) -> Replay:
    """Send every input through `backend.complete` (or `complete`, one at a time only): in order from this
    thread (concurrency 1), or from `concurrency` client threads at once while this thread runs the forward
    passes (the backend's batch decoder, where it has one: see `BatchDecoder.decode` for why this thread)."""
    result = Replay(concurrency=concurrency)
    started = time.perf_counter()
    if concurrency <= 1:
        for item in inputs:
            _one(complete or backend.complete, item, result)
        result.wall_s = time.perf_counter() - started
        return result
    work: queue.Queue = queue.Queue()
    for item in inputs:
        work.put(item)

    def client() -> None:
        while True:
            try:
                item = work.get_nowait()
            except queue.Empty:
                return
            _one(backend.complete, item, result)

    clients = [threading.Thread(target=client, name=f"llm-client-{i}", daemon=True) for i in range(concurrency)]
    decoder = getattr(backend, "decoder", None) if backend.capabilities.batching else None
    stop = threading.Event()

    def stop_when_done() -> None:
        for thread in clients:
            thread.join()
        stop.set()

    for thread in clients:
        thread.start()
    watcher = threading.Thread(target=stop_when_done, daemon=True)
    watcher.start()
    if decoder is not None:
        decoder.drive(stop)
    watcher.join()
    result.wall_s = time.perf_counter() - started
    return result


def _one(complete, item: LLMInput, result: Replay) -> None:
    started = time.perf_counter()
    try:
        completion = complete(item.system, item.user, item.grammar, item.max_new_tokens)
    except Exception as exc:  # noqa: BLE001 - counted and shown, the other requests go on
        result.errors[item.id] = f"{type(exc).__name__}: {exc}"[:300]
        return
    result.seconds[item.id] = time.perf_counter() - started
    result.outputs[item.id] = completion.text


def differences(reference: dict[str, str], other: dict[str, str]) -> list[str]:
    """The ids whose outputs differ (or are missing on one side)."""
    return sorted(key for key in set(reference) | set(other) if reference.get(key) != other.get(key))
