"""Evaluating flow packs (FLAP's metrics): records {id, domain, query, intent} where `domain` picks the
pack and `intent` is the gold intent (null: no intent of the domain covers the request).

Per request: the intent the pipeline chose (the materialized goal), and the plan's API sequence against
the gold intent's flow: edits, inconsistent APIs and steps, hallucinated APIs (`flow_metrics`, against
the flow in `pipeline/packs/flows.py`).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable

from pipeline.llm.grammar import NONE_LINE
from pipeline.packs.flows import FlowDomain, gold_plan, input_options, step_of
from pipeline.packs.pack import load_pack
from pipeline.records import Run


def api_dependencies(domain: FlowDomain, intent: str) -> dict[str, set[str]]:
    """API -> the APIs of the intent's flow it depends on for data (for a one-of input: every flow API
    that produces one of its options and runs no later in the flow)."""
    flow = gold_plan(domain, intent)
    position = {api: i for i, api in enumerate(flow)}
    deps: dict[str, set[str]] = {api: set() for api in flow}
    for api in flow:
        for needed in domain.apis[api].inputs:
            for other in flow:
                if other != api and position[other] < position[api] and \
                        set(domain.apis[other].outputs) & set(input_options(needed)):
                    deps[api].add(other)
    return deps


def flow_metrics(domain: FlowDomain | None, gold_intent: str | None, apis: list[str]) -> dict:
    """FLAP's plan metrics against the gold intent's flow:
    edits: additions + deletions to turn the plan's API multiset into the gold one;
    inconsistent_apis: plan APIs placed before an API (of the gold flow) they depend on for data, or in a
    plan without it;
    inconsistent_steps: flow steps that begin in the plan before a flow step that must come first has
    begun; hallucinated: plan APIs the domain does not have."""
    gold = gold_plan(domain, gold_intent) if domain is not None and gold_intent else []
    missing, extra = Counter(gold) - Counter(apis), Counter(apis) - Counter(gold)
    figures = {"edits": sum(missing.values()) + sum(extra.values()), "apis": len(apis),
               "hallucinated": sum(1 for a in apis if domain is None or a not in domain.apis),
               "inconsistent_apis": 0, "steps": 0, "inconsistent_steps": 0}
    if not gold:
        return figures
    deps = api_dependencies(domain, gold_intent)
    first = {}
    for position, api in enumerate(apis):
        first.setdefault(api, position)
    for position, api in enumerate(apis):
        if any(first.get(dep, len(apis)) > position for dep in deps.get(api, ())):
            figures["inconsistent_apis"] += 1
    steps = step_of(domain, gold_intent)
    begun: dict[int, int] = {}
    for position, api in enumerate(apis):
        if api in steps:
            begun.setdefault(steps[api], position)
    figures["steps"] = len(begun)
    for step, position in begun.items():
        if any(begun.get(earlier, len(apis)) > position for earlier in range(step)):
            figures["inconsistent_steps"] += 1
    return figures


def is_flow_dataset(records: list[dict]) -> bool:
    return bool(records) and all("intent" in r for r in records)


def flow_oracle_ir(record: dict) -> str:
    return f"_goal(g1, {record['intent']}).\n" if record.get("intent") else NONE_LINE + "\n"


def score_flow(record: dict, run: Run) -> dict:
    pack = load_pack(record["domain"])
    chosen = [g.api for g in run.materialized.goals] if run.materialized is not None else []
    predicted = chosen[0] if len(chosen) == 1 else (None if not chosen else "+".join(chosen))
    apis = [c.api for c in run.plan.calls] if run.plan is not None else []
    gold = record.get("intent")
    figures = flow_metrics(pack.flow_domain, gold, apis)
    return {"id": record.get("id", ""), "domain": record["domain"], "gold": gold, "predicted": predicted,
            "intent_ok": predicted == gold, "planned": run.plan is not None, "apis_planned": apis,
            "failure": f"{run.failure.kind}: {run.failure.message}" if run.failure else "",
            "timings_ms": run.timings_ms, **figures}


def evaluate_flows(records: list[dict], execute: Callable[[dict], Run],
                   progress: Callable[[], None] | None = None) -> list[dict]:
    rows = []
    for record in records:
        rows.append(score_flow(record, execute(record)))
        if progress:
            progress()
    return rows


def _pct(n: float, d: float) -> float | None:
    return round(100.0 * n / d, 2) if d else None


def summarize_flows(rows: list[dict]) -> dict:
    """intent_accuracy: all records (out of domain counts when nothing is chosen); the plan metrics over
    in-domain records: avg_edits per request, inconsistent/hallucinated APIs as a share of planned APIs,
    inconsistent steps as a share of the flow steps the plans begin; parsable_pct: in-domain requests
    that got a plan."""
    in_domain = [r for r in rows if r["gold"]]
    ood = [r for r in rows if not r["gold"]]
    apis = sum(r["apis"] for r in in_domain)
    steps = sum(r["steps"] for r in in_domain)
    by_domain: dict[str, list[dict]] = defaultdict(list)
    for r in rows:
        by_domain[r["domain"]].append(r)
    return {
        "records": len(rows),
        "intent_accuracy": round(sum(r["intent_ok"] for r in rows) / len(rows), 4) if rows else None,
        "in_domain_intent_accuracy": round(sum(r["intent_ok"] for r in in_domain) / len(in_domain), 4)
        if in_domain else None,
        "ood_handled": f"{sum(r['intent_ok'] for r in ood)}/{len(ood)}",
        "avg_edits": round(sum(r["edits"] for r in in_domain) / len(in_domain), 3) if in_domain else None,
        "inconsistent_api_pct": _pct(sum(r["inconsistent_apis"] for r in in_domain), apis),
        "inconsistent_step_pct": _pct(sum(r["inconsistent_steps"] for r in in_domain), steps),
        "hallucinated_api_pct": _pct(sum(r["hallucinated"] for r in in_domain), apis),
        "parsable_pct": _pct(sum(r["planned"] for r in in_domain), len(in_domain)),
        "by_domain": {d: {"records": len(rs), "intent_accuracy": round(sum(r["intent_ok"] for r in rs) / len(rs), 4),
                          "avg_edits": round(sum(r["edits"] for r in rs if r["gold"]) /
                                             max(1, sum(1 for r in rs if r["gold"])), 3)}
                      for d, rs in sorted(by_domain.items())},
        "failures": [{"id": r["id"], "gold": r["gold"], "predicted": r["predicted"], "failure": r["failure"]}
                     for r in rows if not r["intent_ok"] or (r["gold"] and r["edits"])][:30],
    }


def flow_report(summary: dict) -> str:
    lines = ["| metric | value |", "|---|---|"]
    for key in ("records", "intent_accuracy", "in_domain_intent_accuracy", "ood_handled", "avg_edits",
                "inconsistent_api_pct", "inconsistent_step_pct", "hallucinated_api_pct", "parsable_pct"):
        lines.append(f"| {key} | {summary[key]} |")
    lines += ["", "| domain | records | intent accuracy | avg edits |", "|---|---|---|---|"]
    for domain, d in summary["by_domain"].items():
        lines.append(f"| {domain} | {d['records']} | {d['intent_accuracy']} | {d['avg_edits']} |")
    return "\n".join(lines)
