"""Prometheus metrics: what the stages, the caches and the sessions did, counted where it happens.

Stages run in Celery's worker processes and `/metrics` is served by the API process, so on a host the
processes share one folder of counters (prometheus_client's multiprocess mode, PROMETHEUS_MULTIPROC_DIR):
each process writes its own file there and a scrape adds them up. `nesyplan serve` and `nesyplan worker`
set that folder up before any metric exists (`use_multiprocess_dir`); a process without one (tests, the
embedded CLI) counts in its own memory. prometheus_client is imported on first use, never at import time:
the folder must be known before it is.

Every name is prefixed `nesyplan_`; labels take few values (stages, statuses, failure kinds, queues, cache
results, session ends), never a run, a key, a domain or free text.
"""

from __future__ import annotations

import hashlib
import os
import sys
import threading
import tempfile
from functools import lru_cache
from pathlib import Path
from types import SimpleNamespace
from typing import Literal, get_args

from pipeline.settings import settings

MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"
# Symbolic stages take milliseconds, translation seconds, a hard plan up to the planner's time-out.
STAGE_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0)


def default_multiprocess_dir() -> Path:
    """The folder `serve` and `worker` share on one host when PROMETHEUS_MULTIPROC_DIR is not set: one per
    user and per service (the Redis URL's digest), in the temporary directory."""
    digest = hashlib.sha256(settings().redis_url.encode()).hexdigest()[:12]
    return Path(tempfile.gettempdir()) / f"nesyplan-metrics-{os.getuid()}-{digest}"


def use_multiprocess_dir(folder: str | Path | None = None) -> Path:
    """Count in a folder shared with the other processes of this host: `folder`, else PROMETHEUS_MULTIPROC_DIR,
    else the default. Made if missing; the environment variable is set, so child processes (the worker's
    pool) count there too. Call before the first metric is used in this process.

    Counts add up across restarts (a counter in Prometheus is read as a rate, so that is harmless); empty
    the folder while nothing of the service runs to start again from zero."""
    if "prometheus_client.values" in sys.modules and not os.environ.get(MULTIPROC_ENV):
        raise RuntimeError("prometheus_client was imported before PROMETHEUS_MULTIPROC_DIR was set: this "
                           "process would count in memory only")
    path = Path(folder or os.environ.get(MULTIPROC_ENV) or default_multiprocess_dir())
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.environ[MULTIPROC_ENV] = str(path)
    return path


def multiprocess_dir() -> str | None:
    return os.environ.get(MULTIPROC_ENV) or None


_making = threading.Lock()


def _metrics() -> SimpleNamespace:
    """The metrics, made by the first caller; the API's threads call this at once, and a metric made twice
    is refused by the registry."""
    with _making:
        return _made()


@lru_cache(maxsize=1)
def _made() -> SimpleNamespace:
    from prometheus_client import Counter, Histogram

    metrics = SimpleNamespace(
        runs_submitted=Counter("nesyplan_runs_submitted", "Runs queued for the workers"),
        runs_ended=Counter("nesyplan_runs_ended", "Runs that ended: status (succeeded, failed), the failure's "
                           "kind (none for a success) and the stage the run ended at",
                           ["status", "kind", "stage"]),
        stage_seconds=Histogram("nesyplan_stage_duration_seconds", "Wall time of one stage of one run",
                                ["stage"], buckets=STAGE_BUCKETS),
        llm_tokens=Counter("nesyplan_llm_tokens", "LLM tokens of translations: prompt (all of it), "
                           "prompt_computed (not from the prompt cache), generated",
                           ["translator", "kind"]),
        llm_seconds=Counter("nesyplan_llm_generation_seconds", "Seconds the LLM took over translations (tokens/s: "
                            "rate of generated tokens over the rate of this)", ["translator"]),
        plan_cache=Counter("nesyplan_plan_cache_lookups", "Plan cache lookups by result (hit, miss)", ["result"]),
        prompt_cache=Counter("nesyplan_prompt_cache_lookups", "Prompt-prefix cache lookups of the in-process "
                             "model by result (hit: the model state of the prompt's opening was kept, miss)",
                             ["result"]),
        sessions_ended=Counter("nesyplan_sessions_ended", "Sessions that ended: how (done, fail, handoff) and why",
                               ["end", "reason"]),
    )
    for cache in (metrics.plan_cache, metrics.prompt_cache):  # a hit rate from the first lookup on
        for result in get_args(CacheResult):
            cache.labels(result=result)
    return metrics


def run_submitted() -> None:
    _metrics().runs_submitted.inc()


def stage_finished(stage: str, seconds: float) -> None:
    _metrics().stage_seconds.labels(stage=stage).observe(seconds)


def run_ended(run, stage: str) -> None:
    """Count a run that has just ended (succeeded or failed) at `stage`."""
    kind = run.failure.kind if run.failure is not None else None
    _metrics().runs_ended.labels(status=run.status, kind=kind or "none", stage=stage).inc()


def stage_observed(run, stage: str) -> None:
    """What a stage just did to the run: its wall time, the translation's tokens, and the run's end."""
    if stage in run.timings_ms:
        stage_finished(stage, run.timings_ms[stage] / 1000)
    if stage == "translate" and run.llm_stats:
        translated(run.translator, run.llm_stats)
    if run.status in ("succeeded", "failed"):
        run_ended(run, stage)


def translated(translator: str | None, stats: dict) -> None:
    """A translation's tokens and LLM time, from its stats (run.llm_stats)."""
    m, translator = _metrics(), translator or "unknown"
    for kind, key in (("prompt", "prompt_tokens"), ("prompt_computed", "prompt_tokens_computed"),
                      ("generated", "new_tokens")):
        if stats.get(key):
            m.llm_tokens.labels(translator=translator, kind=kind).inc(stats[key])
    seconds = (stats.get("llm_s") or 0.0) + (stats.get("retry_llm_s") or 0.0)
    if seconds > 0:
        m.llm_seconds.labels(translator=translator).inc(seconds)


CacheResult = Literal["hit", "miss"]


def _cache_result(hit: bool) -> CacheResult:
    return "hit" if hit else "miss"


def plan_cache_lookup(hit: bool) -> None:
    _metrics().plan_cache.labels(result=_cache_result(hit)).inc()


def prompt_cache_lookup(hit: bool) -> None:
    _metrics().prompt_cache.labels(result=_cache_result(hit)).inc()


def session_ended(end: str, reason: str) -> None:
    _metrics().sessions_ended.labels(end=end, reason=reason).inc()


def registry(*collectors):
    """A registry for one exposition: this host's processes (the multiprocess folder) or this process alone,
    and the given collectors (read at scrape time)."""
    from prometheus_client import REGISTRY, CollectorRegistry
    from prometheus_client.multiprocess import MultiProcessCollector

    _metrics()  # every family shown from the first scrape on (caches with their zero hits and misses)
    exposed = CollectorRegistry(auto_describe=False)
    if multiprocess_dir():
        MultiProcessCollector(exposed)
    else:
        exposed.register(_Forward(REGISTRY))
    for collector in collectors:
        exposed.register(collector)
    return exposed


class _Forward:
    """This process's own registry, as one collector of another."""

    def __init__(self, source):
        self.source = source

    def collect(self):
        yield from self.source.collect()


def exposition(accept: str | None, *collectors) -> tuple[bytes, str]:
    """The body and content type of a scrape (the text format, or OpenMetrics when the scraper asks)."""
    from prometheus_client.exposition import choose_encoder

    encoder, content_type = choose_encoder(accept or "")
    return encoder(registry(*collectors)), content_type


def serve_metrics(port: int, host: str = "127.0.0.1") -> None:
    """Serve this host's metrics on their own port (a worker on a host without the API), on a thread."""
    from prometheus_client import start_http_server

    start_http_server(port, addr=host, registry=registry())
