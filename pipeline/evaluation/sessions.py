"""The sessions benchmark (`../shared/benchmark/sessions/SPEC.md`): its simulated user and its metrics,
by domain and by event kind (none / irrelevant / jump / switch)."""

from __future__ import annotations

import itertools
import time
from collections import defaultdict
from collections.abc import Callable

from pydantic import BaseModel

from pipeline.evaluation.calls import percentile

MAX_USER_MESSAGES = 20
NOT_SURE = "I'm not sure, sorry."


class Transcript(BaseModel):
    messages: list[str] = []
    replies: list[dict] = []
    seconds: list[float] = []


def simulate(scenario: dict, reply: Callable[[str], dict]) -> Transcript:
    """Play the scenario's user against an agent (`reply`: one user message -> one reply object)."""
    events = {event["at"]: event for event in scenario.get("oow", [])}
    transcript = Transcript()
    message, asks = scenario["opening"], 0
    while len(transcript.messages) < MAX_USER_MESSAGES:
        started = time.perf_counter()
        answer = reply(message)
        transcript.seconds.append(time.perf_counter() - started)
        transcript.messages.append(message)
        transcript.replies.append(answer)
        if answer.get("kind") != "ask":
            break
        asks += 1
        event = events.pop(asks, None)
        message = event["text"] if event else scenario.get("answers", {}).get(answer.get("slot"), NOT_SURE)
    return transcript


def _same_call(a: dict, b: dict, mapping: dict[int, int] | None = None) -> bool:
    if a["api"] != b["api"] or set(a["args"]) != set(b["args"]):
        return False
    for name, value in a["args"].items():
        other = b["args"][name]
        if isinstance(value, dict) != isinstance(other, dict):
            return False
        if isinstance(value, dict) and mapping is not None and mapping.get(value["ref"]) != other["ref"]:
            return False
        if not isinstance(value, dict) and value != other:
            return False
    return True


def calls_match(got: list[dict], gold: list[dict]) -> bool:
    """Multiset match with refs: a pairing agreeing on every API and argument, refs included."""
    if len(got) != len(gold):
        return False
    for order in itertools.permutations(range(len(gold))):
        mapping = dict(enumerate(order))
        if all(_same_call(got[i], gold[g], mapping) for i, g in mapping.items()):
            return True
    return False


def matched_calls(got: list[dict], gold: list[dict]) -> int:
    """Calls of `got` paired one to one with equal gold calls (refs compared by kind only)."""
    left, count = list(gold), 0
    for call in got:
        for j, candidate in enumerate(left):
            if _same_call(call, candidate):
                count += 1
                del left[j]
                break
    return count


def flow_violations(executed: list[dict], preconditions: dict[str, list[str]] | None = None) -> int:
    """Executed calls that take an output of a call not carried out before them, or that run before a
    PDL precondition node."""
    count = 0
    for i, call in enumerate(executed):
        refs = [v["ref"] for v in call["args"].values() if isinstance(v, dict)]
        before = {c["api"] for c in executed[:i]}
        if any(not 0 <= r < i for r in refs) or not set((preconditions or {}).get(call["api"], [])) <= before:
            count += 1
    return count


def redundant_asks(scenario: dict, transcript: Transcript) -> int:
    """`ask` replies for a slot the user had already given (answered when asked, or in a jump event)."""
    given: set[str] = set()
    jumps = {e["text"]: e.get("slots", []) for e in scenario.get("oow", []) if e["kind"] == "jump"}
    count = 0
    for i, reply in enumerate(transcript.replies):
        if i > 0:
            message, previous = transcript.messages[i], transcript.replies[i - 1]
            if message in jumps:
                given.update(jumps[message])
            elif previous.get("kind") == "ask" and message == scenario.get("answers", {}).get(previous.get("slot")):
                given.add(previous["slot"])
        if reply.get("kind") == "ask" and reply.get("slot") in given:
            count += 1
    return count


class SessionResult(BaseModel):
    id: str
    domain: str
    events: list[str]
    success: bool
    reason: str = ""
    progress: float
    matched: int
    result_calls: int
    gold_calls: int
    violations: int
    redundant: int
    turns: int
    seconds: list[float]


def score_session(scenario: dict, transcript: Transcript,
                  preconditions: dict[str, list[str]] | None = None) -> SessionResult:
    last = transcript.replies[-1] if transcript.replies else {}
    result = last.get("result") or [] if last.get("kind") == "done" else []
    executed = last.get("executed") or []
    gold = scenario.get("gold", [])
    violations = flow_violations(executed, preconditions)
    matched = matched_calls(result, gold)
    reason = ""
    if last.get("kind") != scenario["expect"]:
        reason = f"ended {last.get('kind')!r} ({last.get('text', '')}), expected {scenario['expect']!r}"
    elif scenario["expect"] == "done" and not calls_match(result, gold):
        reason = f"result {result} differs from gold {gold}"
    elif not all(any(_same_call(r, e) for e in executed) for r in result):
        reason = "a result call was never executed"
    elif violations:
        reason = f"{violations} flow violation(s)"
    progress = (matched / len(gold)) if gold else float(last.get("kind") == scenario["expect"])
    return SessionResult(id=scenario["id"], domain=scenario["domain"],
                         events=sorted({e["kind"] for e in scenario.get("oow", [])}) or ["none"],
                         success=not reason, reason=reason, progress=progress, matched=matched,
                         result_calls=len(result), gold_calls=len(gold), violations=violations,
                         redundant=redundant_asks(scenario, transcript), turns=len(transcript.messages),
                         seconds=transcript.seconds)


def summarize(results: list[SessionResult]) -> dict:
    """The SPEC's metrics over a set of sessions."""
    if not results:
        return {"sessions": 0}
    matched = sum(r.matched for r in results)
    got, gold = sum(r.result_calls for r in results), sum(r.gold_calls for r in results)
    precision = matched / got if got else 0.0
    recall = matched / gold if gold else 0.0
    successes = [r for r in results if r.success]
    seconds = [s for r in results for s in r.seconds]
    return {
        "sessions": len(results),
        "success_rate": round(len(successes) / len(results), 4),
        "task_progress": round(sum(r.progress for r in results) / len(results), 4),
        "tool_precision": round(precision, 4), "tool_recall": round(recall, 4),
        "tool_f1": round(2 * precision * recall / (precision + recall), 4) if precision + recall else 0.0,
        "flow_violations": sum(r.violations for r in results),
        "turns_per_session": round(sum(r.turns for r in successes) / len(successes), 2) if successes else None,
        "redundant_asks": sum(r.redundant for r in results),
        "turn_latency_ms": {"p50": round(percentile(seconds, 50) * 1000, 1),
                            "p90": round(percentile(seconds, 90) * 1000, 1)} if seconds else {},
    }


def report(results: list[SessionResult]) -> dict:
    """Overall, by domain and by event kind, and each failure with its reason."""
    by_domain, by_event = defaultdict(list), defaultdict(list)
    for r in results:
        by_domain[r.domain].append(r)
        for event in r.events:
            by_event[event].append(r)
    return {**summarize(results),
            "by_domain": {d: summarize(rs) for d, rs in sorted(by_domain.items())},
            "by_event": {e: summarize(rs) for e, rs in sorted(by_event.items())},
            "failures": [{"id": r.id, "reason": r.reason} for r in results if not r.success]}
