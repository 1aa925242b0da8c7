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
YES = "yes, go ahead"
NO_WITH = "no, that's not right. "
NO = "no, that's not what I asked for"


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
        if answer.get("kind") not in ("ask", "confirm"):
            break
        asks += 1  # a read-back counts as a question for the events' `at`
        event = events.pop(asks, None)
        if event:
            message = event["text"]
        elif answer["kind"] == "confirm":
            message = confirm_answer(scenario, answer)
        else:
            message = scenario.get("answers", {}).get(answer.get("slot"), NOT_SURE)
    return transcript


def _resolved_equal(call: dict, pool: list[dict], gold: dict, gold_pool: list[dict]) -> bool:
    """Same API and arguments, a ref compared by the call it points at (each in its own list)."""
    return _first_difference(call, pool, gold, gold_pool) is None


def _first_difference(call: dict, pool: list[dict], gold: dict, gold_pool: list[dict]) -> str | None:
    """The first argument of `call` whose value differs from the gold call's, refs resolved (a ref that
    points at a different call gives that call's first differing argument); "" for other differences."""
    if call["api"] != gold["api"] or set(call["args"]) != set(gold["args"]):
        return ""
    for name, value in call["args"].items():
        other = gold["args"][name]
        if isinstance(value, dict) and isinstance(other, dict):
            inner = (_first_difference(pool[value["ref"]], pool, gold_pool[other["ref"]], gold_pool)
                     if 0 <= value["ref"] < len(pool) and 0 <= other["ref"] < len(gold_pool) else "")
            if inner is not None:
                return inner or name
        elif isinstance(value, dict) or isinstance(other, dict) or value != other:
            return name
    return None


def confirm_answer(scenario: dict, reply: dict) -> str:
    """The simulated user on a read-back (SPEC.md, "Protocol additions"): yes when every call equals a
    gold call; else the right value of the first argument that differs, or a plain no. A ref of a call
    read back points into `executed`, or past its end into the calls read back (their places once run)."""
    gold, calls = scenario.get("gold", []), reply.get("calls") or []
    pool = [*(reply.get("executed") or []), *calls]  # a ref is a place in executed, then in calls
    for call in calls:
        if any(_resolved_equal(call, pool, g, gold) for g in gold):
            continue
        same_api = [g for g in gold if g["api"] == call["api"]]
        slot = _first_difference(call, pool, same_api[0], gold) if same_api else ""
        answer = scenario.get("answers", {}).get(slot) if slot else None
        return NO_WITH + answer if answer else NO
    return YES


def wrong_calls_executed(scenario: dict, executed: list[dict]) -> int:
    """Calls carried out that equal no gold call (refs resolved)."""
    gold = scenario.get("gold", [])
    return sum(not any(_resolved_equal(call, executed, g, gold) for g in gold) for call in executed)


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
    wrong_calls: int = 0
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
                         wrong_calls=wrong_calls_executed(scenario, executed),
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
        "wrong_calls_executed": sum(r.wrong_calls for r in results),
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
