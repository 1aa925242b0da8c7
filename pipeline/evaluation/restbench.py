"""`nesyplan eval-restbench`: RestBench's measure (Song et al. 2023) of plans made for an imported spec.

A query set is a JSON list of `{"query", "solution": ["GET /search/person", "GET /person/{person_id}"]}`,
each solution the gold sequence of operations (method and path as the spec writes them). A plan is read
as the same sequence: its calls in order, each as its operation's method and path. Steps are compared with
their path parameters unnamed (`GET /person/{}`). The figures:

- correct path (the paper's): the gold sequence stands in the plan's, in order, other calls allowed between;
- exact: the plan's sequence is the gold one;
- first call: the plan starts with the gold first call;
- no plan: the run ended without one (refused as out of the domain, or failed), by failure kind.

>>> in_order(["GET /a", "GET /b"], ["GET /x", "GET /a", "GET /y", "GET /b"]), in_order(["GET /b", "GET /a"], ["GET /a", "GET /b"])
(True, False)
"""

from __future__ import annotations

import re
import time
from collections import Counter
from pathlib import Path
from typing import Callable

from pydantic import BaseModel, TypeAdapter, field_validator

from pipeline.evaluation.calls import percentile


class Query(BaseModel):
    query: str
    solution: list[str]

    @field_validator("solution")
    @classmethod
    def _as_written_in_paths(cls, steps: list[str]) -> list[str]:
        return [" ".join(step.split()) for step in steps]  # the published set has stray spaces in a few


def as_steps(calls: list[str]) -> list[str]:
    """Calls as the steps compared. The published set names one path parameter as another; OpenAPI holds
    paths that differ only in their parameters' names to be the same path, so a step is its method and
    path with the parameters unnamed.

    >>> as_steps(["GET /person/{movie_id}/movie_credits"])
    ['GET /person/{}/movie_credits']
    """
    return [re.sub(r"\{[^}]*\}", "{}", call) for call in calls]


class QueryResult(BaseModel):
    query: str
    gold: list[str]
    planned: list[str]
    correct_path: bool
    exact: bool
    first_call: bool
    failure: str | None = None     # the failure kind of a run without a plan
    message: str = ""
    latency_ms: float


def load_queries(path: Path) -> list[Query]:
    return TypeAdapter(list[Query]).validate_json(Path(path).read_bytes())


def in_order(gold: list[str], planned: list[str]) -> bool:
    """Whether `gold` is a subsequence of `planned`."""
    rest = iter(planned)
    return all(any(call == step for step in rest) for call in gold)


def evaluate_restbench(pack: str, operations: dict[str, str], queries: list[Query], packs_dir: Path,
                       translator: str = "hf", progress: Callable[[str], None] = lambda _: None) -> dict:
    """Plan every query with the imported pack (under `packs_dir`) and the model, and score each plan;
    `operations`: API name -> `METHOD /path` as the spec writes it (`openapi_packs.operations_of`)."""
    from pipeline.packs.pack import using_packs_root
    from pipeline.run import run_pipeline, warm_up

    results: list[QueryResult] = []
    with using_packs_root(packs_dir):
        progress("loading the model")
        warm_up([pack], translator)
        for query in queries:
            progress(query.query)
            started = time.perf_counter()
            run = run_pipeline(query.query, pack, translator=translator)
            latency = (time.perf_counter() - started) * 1000
            planned = [operations.get(call.api, call.api) for call in run.plan.calls] if run.plan else []
            gold, steps = as_steps(query.solution), as_steps(planned)
            results.append(QueryResult(
                query=query.query, gold=query.solution, planned=planned, latency_ms=round(latency, 1),
                correct_path=bool(steps) and in_order(gold, steps), exact=steps == gold,
                first_call=bool(steps) and steps[0] == gold[0],
                failure=run.failure.kind if run.plan is None and run.failure else None,
                message=run.failure.message if run.plan is None and run.failure else ""))
    return {"queries": [r.model_dump() for r in results], "summary": summarize(results)}


def summarize(results: list[QueryResult]) -> dict:
    n = len(results) or 1
    latencies = [r.latency_ms for r in results]
    return {"queries": len(results),
            "correct_path": round(sum(r.correct_path for r in results) / n, 4),
            "exact": round(sum(r.exact for r in results) / n, 4),
            "first_call": round(sum(r.first_call for r in results) / n, 4),
            "no_plan": round(sum(r.failure is not None for r in results) / n, 4),
            "failures": dict(Counter(r.failure for r in results if r.failure)),
            "latency_ms": {"p50": round(percentile(latencies, 50), 1), "p90": round(percentile(latencies, 90), 1)}}
