"""How much retrieval shrinks the LLM's prompt: the system prompt's tokens with every goal of a pack vs
with only the goals retrieval shortlists for each request."""

from __future__ import annotations

from pipeline.llm.prompt import render_system_prompt
from pipeline.packs.pack import Pack
from pipeline.retrieval.retrievers import Retriever


def prompt_tokens(pack: Pack, retriever: Retriever, records: list[dict], k: int, tokenizer) -> dict:
    """Tokens of the system prompt with every goal of the pack, and (mean over the requests retrieval
    finds in the domain; the others reach no LLM) with only the retrieved shortlist of at most k goals."""
    count = lambda text: len(tokenizer(text)["input_ids"])  # noqa: E731
    full = count(render_system_prompt(pack))
    lists = [[g.goal for g in retriever.shortlist(r["query"], k)] for r in records]
    shortlisted = [count(render_system_prompt(pack, shortlist=goals)) for goals in lists if goals]
    mean = sum(shortlisted) / len(shortlisted) if shortlisted else 0.0
    return {"without_retrieval": full, "with_retrieval_mean": round(mean, 1),
            "reduction": round(full / mean, 1) if mean else None, "shortlist_k": k}
