"""`nesyplan eval-openapi`, its second half: requests written for imported specs (the first half,
`authoring/openapi_packs.import_folder`, imports and tables them) planned with the packaged model and
scored against their expected plans.

A request passes when its plan makes exactly the expected calls, carries the expected values (compared as
the argument's normaliser reads them), asks for exactly the expected arguments (when the case lists them)
and passes the expected outputs on; a request with no expected call passes when the pack refuses it.
"""

from __future__ import annotations

import time
from importlib import resources
from pathlib import Path
from typing import Callable

import yaml
from pydantic import BaseModel

from pipeline.evaluation.calls import percentile
from pipeline.evaluation.sgd import refused
from pipeline.values.canonical import same_value


class RequestCase(BaseModel):
    request: str
    calls: list[str]
    values: dict[str, str] = {}
    asks: list[str] | None = None
    refs: dict[str, str] = {}


class RequestResult(BaseModel):
    spec: str
    request: str
    kind: str
    passed: bool
    latency_ms: float
    calls: list[str] = []
    problems: list[str] = []


def packaged_requests() -> Path:
    return Path(str(resources.files("pipeline.evaluation").joinpath("data/openapi_requests.yaml")))


def load_requests(path: Path) -> tuple[str, dict[str, list[RequestCase]]]:
    raw = yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {}
    specs = {spec: [RequestCase.model_validate(case) for case in cases] for spec, cases in (raw.get("specs") or {}).items()}
    return str(raw.get("today", "")), specs


def kind_of(case: RequestCase) -> str:
    if not case.calls:
        return "out of scope"
    if case.refs:
        return "dataflow"
    return "value asked" if case.asks else "value given" if case.values else "no value"


def score(case: RequestCase, run, pack) -> list[str]:
    """What is wrong with a run's plan against the case (empty: it passes)."""
    calls = run.plan.calls if run.plan is not None else []
    if not case.calls:
        return [] if refused(run) else [f"not refused: {', '.join(c.api for c in calls) or run.failure.message}"]
    if run.plan is None:
        return [f"no plan: {run.failure.message if run.failure else 'none'}"]
    problems = []
    if sorted(c.api for c in calls) != sorted(case.calls):
        problems.append(f"calls {[c.api for c in calls]}, expected {case.calls}")
    for argument, expected in case.values.items():
        got = [a.value for c in calls for name, a in c.args.items() if name == argument and a.value is not None]
        if not any(same_value(pack.normalizers.get(argument, "title_text"), g, expected) for g in got):
            problems.append(f"{argument}={got or None}, expected {expected!r}")
    if case.asks is not None:
        asked = sorted({name for c in calls for name, a in c.args.items() if a.get_info})
        if asked != sorted(case.asks):
            problems.append(f"asks {asked}, expected {sorted(case.asks)}")
    for argument, producer in case.refs.items():
        sources = [calls[a.ref].api for c in calls for name, a in c.args.items()
                   if name == argument and a.ref is not None and a.ref < len(calls)]
        if producer not in sources:
            problems.append(f"{argument} takes {sources or 'no output'}, expected {producer}'s")
    return problems


def evaluate_requests(packs: dict[str, str], requests: Path, packs_dir: Path, translator: str = "hf",
                      progress: Callable[[str], None] = lambda _: None) -> dict:
    """Plan each spec's requests with its imported pack (`packs`: spec -> pack name, under `packs_dir`) and
    score them: the results and the figures (rate, latency) overall, per spec and per kind of request."""
    from pipeline.packs.pack import load_pack, using_packs_root
    from pipeline.run import run_pipeline, warm_up

    today, cases = load_requests(requests)
    results: list[RequestResult] = []
    with using_packs_root(packs_dir):
        progress("loading the model")
        warm_up([packs[s] for s in cases if s in packs], translator)  # latency is planning, not loading
        for spec, spec_cases in cases.items():
            if spec not in packs:
                results += [RequestResult(spec=spec, request=c.request, kind=kind_of(c), passed=False, latency_ms=0,
                                          problems=["its spec was not imported"]) for c in spec_cases]
                continue
            pack = load_pack(packs[spec])
            for case in spec_cases:
                progress(f"{spec}: {case.request}")
                started = time.perf_counter()
                run = run_pipeline(case.request, pack.name, today or None, translator=translator)
                latency = (time.perf_counter() - started) * 1000
                problems = score(case, run, pack)
                results.append(RequestResult(spec=spec, request=case.request, kind=kind_of(case), passed=not problems,
                                             latency_ms=round(latency, 1), problems=problems,
                                             calls=[c.api for c in run.plan.calls] if run.plan else []))
    return {"requests": [r.model_dump() for r in results], "summary": summarize(results)}


def summarize(results: list[RequestResult]) -> dict:
    def figures(items: list[RequestResult]) -> dict:
        latencies = [r.latency_ms for r in items if r.latency_ms]
        return {"requests": len(items), "passed": sum(r.passed for r in items),
                "rate": round(sum(r.passed for r in items) / len(items), 4) if items else None,
                "latency_ms": {"p50": round(percentile(latencies, 50), 1), "p90": round(percentile(latencies, 90), 1)}
                if latencies else None}

    by = {"all": figures(results)}
    for key in sorted({r.spec for r in results}):
        by[f"spec {key}"] = figures([r for r in results if r.spec == key])
    for key in sorted({r.kind for r in results}):
        by[f"kind {key}"] = figures([r for r in results if r.kind == key])
    return by
