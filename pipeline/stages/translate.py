"""Stage `translate`: request -> IR facts, by an LLM, constrained by the pack's grammar when it can be.

The LLM only translates: it names goals and copies the words that give their arguments; the rule pack
normalises and the planner orchestrates. Every output still goes through the IR check.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import date

from pipeline.llm.grammar import NONE_LINE, ir_grammar
from pipeline.llm.prompt import render_system_prompt, render_user_message
from pipeline.packs.pack import Pack
from pipeline.language.linking import learned_parts
from pipeline.retrieval.lookups import lookup_goals
from pipeline.records import LOOKUP, Analysis, StageError, ValueAnalysis
from pipeline.settings import settings
from pipeline.stages.check import check_ir

MAX_NEW_TOKENS = 200
# A fixed budget cut long answers short (an unfinished fact is no valid IR): one call with five uuids and
# dates, three calls with their uuids. So each goal beyond the first adds its facts' share, and the request's
# own length the values it gives (a value is written as the request writes it: about two characters a
# token for an id). The grammar ends the answer where the facts end: an unused budget costs nothing.
TOKENS_PER_MORE_GOAL = 80


@dataclass
class Translation:
    prompt: str
    raw: str
    ir: str
    attempts: int = 1
    shortlist: list[dict] = field(default_factory=list)
    stats: dict = field(default_factory=dict)
    analysis: Analysis | None = None


GOAL_CHOICES = ("retrieve", "shortlist", "llm")


def translate(query: str, pack: Pack, backend, today: str, constrain: bool = True, goal_choice: str = "retrieve",
              max_new_tokens: int = MAX_NEW_TOKENS, shortlist_k: int | None = None) -> Translation:
    """Ask the backend for IR.

    goal_choice `retrieve`: the goal retriever picks the goals (one per clause; none: out of the domain,
    no LLM call) and the LLM only fills their arguments; `shortlist`: the retriever shortlists at most
    `shortlist_k` goals and the LLM picks among them; `llm`: the LLM picks among all of the pack's goals.
    With retrieval the prompt shows only the retrieved goals, and the grammar allows only them.
    Constrained, the grammar makes every output valid IR. Unconstrained, or on a server that ignores
    grammars, the IR check judges the output, and one retry is given the checker's error."""
    if goal_choice not in GOAL_CHOICES:
        raise ValueError(f"goal_choice must be one of {', '.join(GOAL_CHOICES)}, not {goal_choice!r}")
    user = render_user_message(query)
    stats: dict = {}
    shortlist: list[dict] = []
    goals, fixed, sources, contexts = None, False, None, None
    looked_up: dict[str, str] = {}  # a lookup goal -> the goal it finds an id for
    analysis = Analysis(learned=learned_parts(pack))
    if goal_choice in ("retrieve", "shortlist"):
        from pipeline.retrieval.retrievers import get_retriever

        t0 = time.perf_counter()
        retriever = get_retriever(pack)
        k = shortlist_k or settings().shortlist_k
        chosen = (retriever.by_clause(query, max_goals=pack.spec.max_goals)[:k] if goal_choice == "retrieve"
                  else retriever.shortlist(query, k))
        stats["retrieve_s"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        analysis.clauses = retriever.clause_analysis(query)
        analysis.seconds += stats["retrieve_s"] + time.perf_counter() - t0  # goals, then each clause's
        shortlist = [{"goal": c.goal, "score": round(c.score, 4), "source": c.source, "context": c.context,
                      "method": retriever.method, "chosen_by": c.chosen_by} for c in chosen]
        goals = [c.goal for c in chosen]
        fixed = goal_choice == "retrieve"
        sources, contexts = ([c.source for c in chosen], [c.context for c in chosen]) if fixed else (None, None)
        if fixed:  # a search that may find what a goal needs, read from that goal's words; the planner
            by_goal = {entry["goal"]: entry for entry in shortlist}  # calls it or asks, whichever costs less
            said_by: dict[str, str] = {}  # a search's words may be fewer than its consumer's: the name it looks for
            found = lookup_goals(pack, goals, {e["goal"]: e["source"] for e in shortlist}, said_by)
            for search, consumer in found.items():
                if len(goals) >= pack.spec.max_goals:
                    break  # the IR's limit holds for lookups too; a lookup left out is a question instead
                by_goal[search] = {**by_goal[consumer], "goal": search, "score": 0.0, "chosen_by": LOOKUP,
                                   "source": said_by.get(search) or by_goal[consumer]["source"]}
                shortlist.append(by_goal[search])  # a lookup may feed another (a search, then a read)
                goals.append(search)
                looked_up[search] = consumer
                sources.append(by_goal[search]["source"])
                contexts.append(by_goal[consumer]["context"])
        analysis.goals = shortlist
        system = render_system_prompt(pack, shortlist=goals)
        if not goals:
            ir = NONE_LINE + "\n"
            return Translation(prompt=system + "\n" + user, raw=ir, ir=ir, attempts=0, shortlist=shortlist,
                               stats={**stats, "first_output_valid": True, "new_tokens": 0, "llm_s": 0.0},
                               analysis=analysis)
        if not constrain and fixed:  # without a grammar, the goals can only be suggested
            user = f"{user}\n% goals: {', '.join(goals)}\n"
    else:
        system = render_system_prompt(pack)
    grammar = None
    if constrain:
        t0 = time.perf_counter()
        readings: list = []
        grammar = ir_grammar(pack, query, date.fromisoformat(today), goals, fixed=fixed, sources=sources,
                             contexts=contexts, max_goals=pack.spec.max_goals, allow_none=goals is None,
                             record=readings, lookups=looked_up)
        stats["grammar_build_s"] = time.perf_counter() - t0
        analysis.values = _value_analysis(readings)
        analysis.seconds += stats["grammar_build_s"]  # the value readings are most of the grammar's build
    if goals:
        max_new_tokens += TOKENS_PER_MORE_GOAL * (len(goals) - 1) + len(query) // 2
    completion = backend.complete(system, user, grammar, max_new_tokens)
    stats.update(completion.stats, prompt_tokens=completion.prompt_tokens, new_tokens=completion.new_tokens,
                 llm_s=completion.seconds)
    raw = completion.text.strip() + "\n" if completion.text.strip() else ""
    attempts = 1
    grammar_enforced = constrain and backend.capabilities.grammar
    rejection = _rejection(raw, pack)
    stats["first_output_valid"] = rejection is None
    if not grammar_enforced and rejection is not None:
        retry_user = (f"{user} {raw.strip()}\n\nThat answer was rejected: {rejection}\n"
                      f"Answer again with facts only.\n{render_user_message(query)}")
        retry = backend.complete(system, retry_user, grammar, max_new_tokens)
        attempts = 2
        stats["retry_llm_s"] = retry.seconds
        stats["new_tokens"] += retry.new_tokens
        raw = raw + "% --- rejected; retry:\n" + retry.text.strip() + "\n"
        return Translation(prompt=system + "\n" + retry_user, raw=raw, ir=retry.text.strip() + "\n",
                           attempts=attempts, shortlist=shortlist, stats=stats, analysis=analysis)
    return Translation(prompt=system + "\n" + user, raw=raw, ir=raw, attempts=attempts, shortlist=shortlist,
                       stats=stats, analysis=analysis)


def _value_analysis(readings: list) -> list[ValueAnalysis]:
    """Each reading once (the same words are read again as one goal's words), kept ones first."""
    seen, out = set(), []
    for r in sorted(readings, key=lambda r: not r.kept):
        key = (r.argument, r.source, r.start, r.end, r.value)
        if key not in seen:
            seen.add(key)
            out.append(ValueAnalysis(argument=r.argument, text=r.text, start=r.start, end=r.end, value=r.value,
                                     source=r.source, probability=r.probability, kept=r.kept, why=r.why))
    return out


def _rejection(ir: str, pack: Pack) -> str | None:
    """Why the IR check rejects this output, or None when it passes."""
    try:
        check_ir(ir, pack)
        return None
    except StageError as exc:
        return exc.message
