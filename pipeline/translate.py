"""Stage `translate`: request -> IR facts, by an LLM, constrained by the pack's grammar when it can be.

The LLM only translates: it names goals and copies the words that give their arguments; the rule pack
normalises and the planner orchestrates. Every output still goes through the IR check.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from pipeline.grammar import ir_grammar
from pipeline.ir_check import check_ir
from pipeline.pack import Pack
from pipeline.prompt import render_system_prompt, render_user_message
from pipeline.records import StageError

MAX_NEW_TOKENS = 200


@dataclass
class Translation:
    prompt: str
    raw: str
    ir: str
    attempts: int = 1
    stats: dict = field(default_factory=dict)


def translate(query: str, pack: Pack, backend, constrain: bool = True, shortlist: list[str] | None = None,
              max_new_tokens: int = MAX_NEW_TOKENS) -> Translation:
    """Ask the backend for IR. Constrained: the grammar makes every output valid IR. Unconstrained, or on a
    server that ignores grammars: the IR check judges it, and one retry is given the checker's error."""
    system = render_system_prompt(pack)
    user = render_user_message(query)
    grammar = None
    stats: dict = {}
    if constrain:
        t0 = time.perf_counter()
        grammar = ir_grammar(pack, query, shortlist)
        stats["grammar_build_s"] = time.perf_counter() - t0
    completion = backend.complete(system, user, grammar, max_new_tokens)
    stats.update(completion.stats, prompt_tokens=completion.prompt_tokens, new_tokens=completion.new_tokens,
                 llm_s=completion.seconds)
    raw = completion.text.strip() + "\n" if completion.text.strip() else ""
    attempts = 1
    grammar_enforced = constrain and (getattr(backend, "name", "") == "hf" or getattr(backend, "send_grammar", False))
    stats["first_output_valid"] = _valid(raw, pack)
    if not grammar_enforced and not stats["first_output_valid"]:
        try:
            check_ir(raw, pack)
        except StageError as exc:
            retry_user = (f"{user} {raw.strip()}\n\nThat answer was rejected: {exc.message}\n"
                          f"Answer again with facts only.\n{render_user_message(query)}")
            retry = backend.complete(system, retry_user, grammar, max_new_tokens)
            attempts = 2
            stats["retry_llm_s"] = retry.seconds
            stats["new_tokens"] += retry.new_tokens
            raw = raw + "% --- rejected; retry:\n" + retry.text.strip() + "\n"
            return Translation(prompt=system + "\n" + retry_user, raw=raw, ir=retry.text.strip() + "\n",
                               attempts=attempts, stats=stats)
    return Translation(prompt=system + "\n" + user, raw=raw, ir=raw, attempts=attempts, stats=stats)


def _valid(ir: str, pack: Pack) -> bool:
    try:
        check_ir(ir, pack)
        return True
    except StageError:
        return False
