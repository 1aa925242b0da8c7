"""Retrieval figures: does the retriever put a request's gold goals in front of the LLM?

recall_at_k: single-goal requests whose gold goal ranks in the top k (single-step ranking).
goal_set_recall: in-domain requests whose whole gold goal set is in the returned shortlist: the top k
(single step), the progressive picks (`progressive`), or one goal per clause (`clause`, what translate
uses). exact_goal_set: the shortlist is exactly the gold set. ood_rejected: out-of-domain requests
for which nothing is returned.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from pipeline.packs.pack import Pack
from pipeline.retrieval.retrievers import Retriever

STRATEGIES = ("topk", "progressive", "clause")


def gold_goals(record: dict, pack: Pack) -> list[str]:
    """The goals a benchmark record asks for, whatever its format: `goals`, an `intent` (flows), or
    API `calls` (mapped back to the pack's goals; `intended` ones for a request that breaks a rule)."""
    if "goals" in record:
        return list(record["goals"])
    if "intent" in record:
        return [record["intent"]] if record["intent"] else []
    by_api = {g.api: name for name, g in pack.spec.goals.items()}
    # A request that breaks a domain rule still asks for its goals: the rules, not retrieval, reject it.
    calls = record.get("intended") if record.get("error") else record.get("calls", [])
    return [by_api.get(call["api"], call["api"]) for call in calls or []]


def returned_goals(retriever: Retriever, query: str, strategy: str, k: int,
                   ranked: list | None = None) -> list[str]:
    """`ranked`: the request's single-step ranking when the caller already has it."""
    if strategy == "progressive":
        return [g.goal for g in retriever.progressive(query)]
    if strategy == "clause":
        return [g.goal for g in retriever.by_clause(query)]
    if strategy == "topk":
        ranked = retriever.rank(query) if ranked is None else ranked
        if not ranked or ranked[0].score < retriever.first_threshold:
            return []
        return [g.goal for g in ranked[:k]]
    raise ValueError(f"unknown strategy {strategy!r}: choose one of {', '.join(STRATEGIES)}")


def evaluate_retrieval(records: Iterable[dict], retriever: Retriever, strategy: str = "topk", k: int = 5,
                       ks: tuple[int, ...] = (1, 5, 10),
                       progress: Callable[[], None] | None = None) -> dict:
    hits = {n: 0 for n in ks}
    single = in_domain = set_hits = exact = ood = ood_rejected = 0
    sizes: list[int] = []
    misses: list[dict] = []
    for record in records:
        gold = gold_goals(record, retriever.pack)
        query = record["query"]
        if progress:
            progress()
        ranked = retriever.rank(query)  # once: for recall@k and for the top-k shortlist
        returned = returned_goals(retriever, query, strategy, k, ranked)
        if len(gold) == 1:
            single += 1
            order = [g.goal for g in ranked]
            for n in ks:
                hits[n] += gold[0] in order[:n]
        if not gold:
            ood += 1
            ood_rejected += not returned
            continue
        in_domain += 1
        sizes.append(len(returned))
        found = set(gold) <= set(returned)
        set_hits += found
        exact += set(gold) == set(returned)
        if not found and len(misses) < 20:
            misses.append({"id": record.get("id"), "gold": gold, "returned": returned})
    share = lambda n, d: round(n / d, 4) if d else None  # noqa: E731
    return {
        "method": retriever.method, "strategy": strategy, "k": k if strategy == "topk" else None,
        "requests": in_domain + ood,
        "single_goal_requests": single,
        **{f"recall_at_{n}": share(hits[n], single) for n in ks},
        "goal_set_recall": share(set_hits, in_domain),
        "exact_goal_set": share(exact, in_domain),
        "ood_rejected": share(ood_rejected, ood),
        "mean_shortlist": round(sum(sizes) / len(sizes), 2) if sizes else 0.0,
        "misses": misses,
    }
