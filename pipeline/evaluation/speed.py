"""Speed over a stream of requests (`nesyplan bench --path symbolic|end-to-end`): each stage's wall time
per request, p50/p90 per stage and in all, requests/s; the symbolic stream also runs the naive planner
path (domain and task parsed from text, Fast Downward for every request, no cache) for the ratio."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from pipeline.evaluation.calls import oracle_ir, percentile
from pipeline.evaluation.flows import flow_oracle_ir
from pipeline.packs.pack import Pack, load_pack
from pipeline.records import IRFact, Run
from pipeline.run import SYMBOLIC_STAGES, new_run, run_pipeline, run_stage
from pipeline.stages.plan import plan_cache


def gold_ir(record: dict, pack: Pack) -> str:
    """The IR a perfect translator would write, for every benchmark format: gold `calls` (quickbooks),
    an `intent` (flows) or `goals` alone (the scale catalog: every argument left to ask)."""
    if "intent" in record:
        return flow_oracle_ir(record)
    if "calls" in record or "intended" in record:
        return oracle_ir(record, pack)
    return "".join(IRFact(predicate="_goal", arguments=[f"g{i}", goal], constants=[True, True]).render() + "\n"
                   for i, goal in enumerate(record.get("goals") or [], 1))


@dataclass
class Stream:
    """Per request: each stage's ms and the total; how each run ended; the stream's wall time."""
    timings: list[dict[str, float]] = field(default_factory=list)
    outcomes: Counter = field(default_factory=Counter)
    wall_s: float = 0.0
    cache: dict = field(default_factory=dict)
    tokens: Counter = field(default_factory=Counter)

    def add(self, run: Run) -> None:
        timing = {**run.timings_ms, "total": round(sum(run.timings_ms.values()), 3)}
        if run.analysis is not None:  # part of translate: the language analysis before the LLM
            timing["analysis"] = round(run.analysis.seconds * 1000, 3)
        self.timings.append(timing)
        stats = run.llm_stats or {}
        for key in ("decoded_tokens", "forced_tokens", "new_tokens"):
            self.tokens[key] += stats.get(key, 0)
        self.tokens["forward_ms"] += round(stats.get("forward_s", 0.0) * 1000)
        self.outcomes[run.status if run.failure is None else f"failed: {run.failure.kind}"] += 1

    def summary(self) -> dict:
        stages = [s for s in ("analysis", "translate", *SYMBOLIC_STAGES, "total") if any(s in t for t in self.timings)]
        per_stage = {s: {"p50": round(percentile([t[s] for t in self.timings if s in t], 50), 2),
                         "p90": round(percentile([t[s] for t in self.timings if s in t], 90), 2)} for s in stages}
        return {"requests": len(self.timings), "stages_ms": per_stage,
                "p50_ms": per_stage.get("total", {}).get("p50"), "p90_ms": per_stage.get("total", {}).get("p90"),
                "requests_per_s": round(len(self.timings) / self.wall_s, 2) if self.wall_s else None,
                "outcomes": dict(self.outcomes), "plan_cache": self.cache, **self._decoding()}

    def _decoding(self) -> dict:
        """Tokens the model chose against tokens the grammar forced (jump-forward), and ms per model step."""
        if not self.tokens["new_tokens"]:
            return {}
        steps = self.tokens["decoded_tokens"]
        return {"tokens": {"written": self.tokens["new_tokens"], "decoded": steps, "forced": self.tokens["forced_tokens"],
                           "forced_share": round(self.tokens["forced_tokens"] / self.tokens["new_tokens"], 3),
                           "ms_per_model_step": round(self.tokens["forward_ms"] / steps, 1) if steps else None}}


def _domain_of(record: dict, default: str) -> str:
    return record.get("domain") or default


def _stream(records: list[dict], run_one: Callable[[dict], Run], cached: bool = True,
            progress: Callable[[], None] | None = None) -> Stream:
    """Run each record in order, as one process would serve them, the plan cache cold at the start."""
    plan_cache().clear()
    stream = Stream()
    started = time.perf_counter()
    for record in records:
        stream.add(run_one(record))
        if progress:
            progress()
    stream.wall_s = time.perf_counter() - started
    cache = plan_cache()
    stream.cache = {"hits": cache.hits, "misses": cache.misses, "entries": len(cache)} if cached else {}
    return stream


def symbolic_stream(records: list[dict], domain: str, fast: bool = True,
                    progress: Callable[[], None] | None = None) -> Stream:
    """Check, materialize, compile and plan each request from its gold IR. `fast`: the plan stage's fast
    path; else the naive path (domain and task parsed from text, Fast Downward every time, no cache)."""
    def run_one(record: dict) -> Run:
        pack = load_pack(_domain_of(record, domain))
        run = new_run(record.get("query", ""), pack.name, record.get("today"), gold_ir(record, pack))
        for stage in SYMBOLIC_STAGES:
            run_stage(run, stage, pack, fast_plan=fast)
        return run

    return _stream(records, run_one, fast, progress)


def end_to_end_stream(records: list[dict], domain: str, translator: str,
                      progress: Callable[[], None] | None = None) -> Stream:
    """Every stage from the plain-language request, translation included (the model loaded and warmed
    up beforehand, as a worker does at start)."""
    return _stream(records, lambda record: run_pipeline(record.get("query", ""), _domain_of(record, domain),
                                                        record.get("today"), translator=translator),
                   True, progress)
