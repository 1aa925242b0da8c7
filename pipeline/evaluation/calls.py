"""Evaluating call packs (quickbooks SPEC): translators that turn a gold record into IR, the SPEC's scorer, and the report tables.

Success (shared/benchmark/quickbooks/SPEC.md): the plan's API calls equal the gold `calls` as a multiset
(API and every argument; get_info_api exactly for the null arguments; no extra calls), each `ref` bound to
the output of the right call, which comes first; for `error` / `ood` records, no plan and the error
reported.
"""

from __future__ import annotations

import itertools
import json
import statistics
from collections import defaultdict
from typing import Callable, Iterable

from pydantic import BaseModel

from pipeline.packs.pack import Pack
from pipeline.records import IRFact, Plan, Run


def oracle_ir(record: dict, pack: Pack) -> str:
    """The IR a perfect translator would emit: each gold call's goal and the values it gives (for an
    `error` record, the calls as the request states them). Null arguments are simply not given."""
    calls = record.get("intended") if record.get("error") else record.get("calls", [])
    facts: list[IRFact] = []
    for i, call in enumerate(calls or [], 1):
        goal_id = f"g{i}"
        facts.append(IRFact(predicate="_goal", arguments=[goal_id, pack.goal_of_api(call["api"])],
                            constants=[True, True]))
        order = pack.spec.apis[call["api"]].arguments
        for argument, value in sorted(call["args"].items(), key=lambda kv: order.index(kv[0])):
            if value is None:
                continue
            if isinstance(value, dict):
                facts.append(IRFact(predicate=f"_{argument}", arguments=[goal_id, f"g{value['ref'] + 1}"],
                                    constants=[True, True]))
            else:
                facts.append(IRFact(predicate=f"_{argument}", arguments=[goal_id, str(value)],
                                    constants=[True, False]))
    return "".join(f.render() + "\n" for f in facts)


# --- scoring -----------------------------------------------------------------------------------------

def _arg_matches(gold, planned, mapping: dict[int, int], argument: str) -> bool:
    if gold is None:
        return planned.get_info == argument and planned.value is None and planned.ref is None
    if isinstance(gold, dict):
        return planned.ref is not None and mapping.get(planned.ref) == gold["ref"]
    return planned.value == gold and planned.ref is None and planned.get_info is None


def plan_matches(gold_calls: list[dict], plan: Plan) -> bool:
    """Multiset match with consistent refs: some pairing of planned and gold calls agrees on every API
    and argument, and every ref points at an earlier planned call paired with the gold call it names."""
    calls = plan.calls
    if len(calls) != len(gold_calls):
        return False
    for order in itertools.permutations(range(len(gold_calls))):
        mapping = dict(enumerate(order))  # planned index -> gold index
        if all(_call_matches(calls[p], gold_calls[g], mapping, p) for p, g in mapping.items()):
            return True
    return False


def _call_matches(planned, gold: dict, mapping: dict[int, int], position: int) -> bool:
    if planned.api != gold["api"] or set(planned.args) != set(gold["args"]):
        return False
    for argument, value in gold["args"].items():
        arg = planned.args[argument]
        if arg.ref is not None and arg.ref >= position:
            return False
        if not _arg_matches(value, arg, mapping, argument):
            return False
    return True


def _describe_calls(calls: Iterable) -> str:
    parts = []
    for c in calls:
        if isinstance(c, dict):
            args = ", ".join(f"{k}={json.dumps(v)}" for k, v in c["args"].items())
        else:
            args = ", ".join(f"{k}=" + (json.dumps(a.value) if a.value is not None else
                                         f"ref:{a.ref}" if a.ref is not None else "ask")
                             for k, a in c.args.items())
        parts.append(f"{c['api'] if isinstance(c, dict) else c.api}({args})")
    return "; ".join(parts)


def score(record: dict, run: Run) -> tuple[bool, str]:
    """(success, reason for a failure)."""
    expected = "domain_error" if record.get("error") else "out_of_domain" if record.get("ood") else None
    if expected:
        if run.plan is None and run.failure is not None and run.failure.kind == expected:
            return True, ""
        got = f"{run.failure.kind}: {run.failure.message}" if run.failure else "a plan"
        return False, f"expected {expected} ({record.get('error') or 'ood'}), got {got}"
    if run.plan is None:
        failure = run.failure
        return False, f"no plan: {failure.stage}/{failure.kind}: {failure.message}" if failure else "no plan"
    if plan_matches(record["calls"], run.plan):
        return True, ""
    return False, (f"plan differs: expected {_describe_calls(record['calls'])}; "
                   f"got {_describe_calls(run.plan.calls)}")


# --- report ------------------------------------------------------------------------------------------

class RecordResult(BaseModel):
    id: str
    success: bool
    reason: str = ""
    categories: list[str]
    timings_ms: dict[str, float]
    llm_stats: dict = {}


def categories_of(record: dict) -> list[str]:
    """The report rows a record counts in (the breakdown of the paper's Tables 1 and 2)."""
    if record.get("error"):
        return ["errors (domain rule broken)"]
    if record.get("ood"):
        return ["out of domain"]
    tags = record.get("tags", {})
    goals = tags.get("goals", len(record.get("calls", [])))
    rows = [f"{'complete' if tags.get('complete', True) else 'incomplete'}",
            f"{goals} goal{'s' if goals != 1 else ''}, {'with' if tags.get('dataflow') else 'no'} dataflow"]
    if goals == 1 and record.get("calls"):
        rows.append(f"single goal: {record['calls'][0]['api']}")
    return rows


def evaluate(records: list[dict], translate: Callable[[dict], str],
             execute: Callable[[dict, str], Run],
             progress: Callable[[], None] | None = None) -> list[RecordResult]:
    results = []
    for record in records:
        run = execute(record, translate(record))
        success, reason = score(record, run)
        results.append(RecordResult(id=record.get("id", ""), success=success, reason=reason,
                                    categories=categories_of(record), timings_ms=run.timings_ms,
                                    llm_stats=run.llm_stats))
        if progress:
            progress()
    return results


def percentile(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[int(q) - 1]


def summarize(results: list[RecordResult]) -> dict:
    total = len(results)
    success = sum(r.success for r in results)
    rows: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for r in results:
        for category in r.categories:
            rows[category][0] += 1
            rows[category][1] += r.success
    stages = sorted({s for r in results for s in r.timings_ms})
    latency = {}
    for stage in stages + ["total"]:
        values = [sum(r.timings_ms.values()) if stage == "total" else r.timings_ms[stage]
                  for r in results if stage == "total" or stage in r.timings_ms]
        latency[stage] = {"p50": round(percentile(values, 50), 2), "p90": round(percentile(values, 90), 2)}
    translated = [r.llm_stats for r in results if "first_output_valid" in r.llm_stats]
    generated = [s for s in translated if s.get("new_tokens")]
    return {
        "total": total,
        "success": success,
        "rate": round(success / total, 4) if total else 0.0,
        # share of requests whose raw LLM output (first attempt) was valid IR / a parsable answer
        "ir_parse_rate": round(sum(bool(s["first_output_valid"]) for s in translated) / len(translated), 4)
        if translated else None,
        "llm": {
            "requests_generating": len(generated),
            "new_tokens_p50": percentile([s["new_tokens"] for s in generated], 50),
            "ms_per_new_token_p50": round(percentile(
                [1000 * s.get("generate_s", s.get("llm_s", 0)) / s["new_tokens"] for s in generated], 50), 2),
            "grammar_build_ms_p50": round(1000 * percentile([s["grammar_build_s"] for s in generated
                                                              if "grammar_build_s" in s], 50), 2),
            "grammar_compile_ms_p50": round(1000 * percentile([s["grammar_compile_s"] for s in generated
                                                                if "grammar_compile_s" in s], 50), 2),
        } if generated else None,
        "categories": {name: {"n": n, "success": s, "rate": round(s / n, 4)}
                       for name, (n, s) in sorted(rows.items(), key=lambda kv: _row_order(kv[0]))},
        "latency_ms": latency,
        "failures": [{"id": r.id, "reason": r.reason} for r in results if not r.success],
    }


def _row_order(name: str) -> tuple:
    prefixes = ["complete", "incomplete", "1 goal", "2 goals", "3 goals", "single goal", "errors", "out of"]
    return next((i for i, p in enumerate(prefixes) if name.startswith(p)), len(prefixes)), name


def markdown_report(summary: dict) -> str:
    lines = ["| category | n | success | rate |", "|---|---:|---:|---:|",
             f"| **overall** | {summary['total']} | {summary['success']} | {summary['rate']:.1%} |"]
    if summary.get("ir_parse_rate") is not None:
        lines.append(f"| raw LLM output valid (ir_parse_rate) | | | {summary['ir_parse_rate']:.1%} |")
    for name, row in summary["categories"].items():
        lines.append(f"| {name} | {row['n']} | {row['success']} | {row['rate']:.1%} |")
    lines += ["", "| stage | p50 ms | p90 ms |", "|---|---:|---:|"]
    for stage, q in summary["latency_ms"].items():
        lines.append(f"| {stage} | {q['p50']:.1f} | {q['p90']:.1f} |")
    return "\n".join(lines)
