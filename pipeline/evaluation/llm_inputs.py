"""The LLM inputs the translate stage sends for a dataset's requests (`bench --path llm`): each request's
system prompt, message and grammar, recorded by running the stage with a backend that only records."""

from __future__ import annotations

from collections.abc import Callable
from datetime import date

from pipeline.llm.backends import Capabilities, Completion
from pipeline.llm.load import LLMInput
from pipeline.packs.pack import load_pack
from pipeline.settings import settings
from pipeline.stages.translate import translate


class _Recorder:
    """Stands where the backend would: keeps what it is asked and answers nothing (the stage then ends
    without a retry, as it does behind a backend that enforces the grammar)."""

    capabilities = Capabilities(grammar=True, batching=False, device="none", prompt_prefix_cache=False,
                                jump_forward=False)

    def __init__(self) -> None:
        self.asked: list[tuple] = []

    def complete(self, system: str, user: str, grammar: str | None = None, max_new_tokens: int = 160) -> Completion:
        self.asked.append((system, user, grammar, max_new_tokens))
        return Completion(text="")


def record_llm_inputs(records: list[dict], domain: str,
                      progress: Callable[[], None] | None = None) -> list[LLMInput]:
    """One input per request that reaches the LLM (the analysis alone settles some), in dataset order."""
    inputs: list[LLMInput] = []
    for number, record in enumerate(records, 1):
        recorder = _Recorder()
        pack = load_pack(record.get("domain") or domain)
        translate(record["query"], pack, recorder, record.get("today") or date.today().isoformat(),
                  goal_choice=settings().goal_choice)
        for system, user, grammar, max_new_tokens in recorder.asked:
            inputs.append(LLMInput(id=str(record.get("id") or number), system=system, user=user, grammar=grammar,
                                   max_new_tokens=max_new_tokens))
        if progress:
            progress()
    return inputs
