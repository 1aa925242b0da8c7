"""The hf backend's batch decoder with the real packaged model on the CPU: one request alone writes what
the loop through transformers' own cache writes; requests from many threads at once are decoded together
(more than one row per step) and each writes what it writes alone; the padded layout a GPU uses writes what
the packed CPU layout writes; a request the model cannot take fails alone."""

import threading

import pytest

from pipeline.llm.backends import get_backend
from pipeline.llm.load import differences, replay
from pipeline.llm.prompt import render_system_prompt, render_user_message

TODAY = "2024-10-15"
REQUESTS = [
    "Send an invoice for 2k for the deck repair, then get me on the phone about it",
    "what did we spend in the first quarter of 2024?",
    "change Maria Lopez's email to maria@lopez.org",
    "how did the business do over the past month, income against costs",
    "bill Acme 340 dollars for the window install and email me when it's paid",
    "how do I export my reports",
]


@pytest.fixture(scope="module")
def hf():
    return get_backend("hf")


@pytest.fixture(scope="module")
def inputs(pack):
    """The LLM inputs translate sends for the requests, as `bench --path llm` records them."""
    from pipeline.evaluation.llm_inputs import record_llm_inputs

    asked = record_llm_inputs([{"id": str(i), "query": q, "today": TODAY} for i, q in enumerate(REQUESTS)],
                              "quickbooks")
    assert [item.id for item in asked] == [str(i) for i in range(len(REQUESTS))]
    assert all(item.grammar.startswith("root ::=") for item in asked)
    return asked


def test_one_request_alone_writes_what_the_loop_through_the_model_cache_writes(hf, inputs):
    loop_steps = steps = 0
    for item in inputs[:3]:
        loop = hf._complete_alone(item.system, item.user, item.grammar, item.max_new_tokens)
        batched = hf.complete(item.system, item.user, item.grammar, item.max_new_tokens)
        assert batched.text == loop.text and batched.text
        assert batched.stats["rows_per_step"] == 1.0
        loop_steps, steps = loop_steps + loop.stats["decoded_tokens"], steps + batched.stats["steps"]
    # Where the grammar allows one token only, no step is spent on it.
    assert steps < loop_steps


def test_requests_at_once_share_steps_and_write_what_each_writes_alone(hf, inputs):
    alone = replay(hf, inputs, 1)
    rows_seen = []
    original = hf.decoder._advance

    def advance(jobs):
        rows_seen.append(len(jobs))
        return original(jobs)

    hf.decoder._advance = advance
    try:
        together = replay(hf, inputs, len(inputs))
    finally:
        del hf.decoder._advance
    assert not together.errors
    assert differences(alone.outputs, together.outputs) == []
    assert max(rows_seen) > 1  # decoded together, not in turn


def test_callers_without_a_driving_thread_take_turns_and_get_their_own_answers(hf, inputs):
    """No thread in `drive`: the waiting callers run the steps themselves, one at a time."""
    alone = {item.id: hf.complete(item.system, item.user, item.grammar).text for item in inputs[:4]}
    answers = {}

    def ask(item):
        answers[item.id] = hf.complete(item.system, item.user, item.grammar).text

    threads = [threading.Thread(target=ask, args=(item,)) for item in inputs[:4]]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert answers == alone


def test_the_padded_layout_writes_what_the_packed_one_writes(hf, inputs):
    packed = replay(hf, inputs[:4], 4)
    hf.decoder.runner.packed = False
    try:
        padded = replay(hf, inputs[:4], 4)
    finally:
        hf.decoder.runner.packed = True
    assert differences(packed.outputs, padded.outputs) == []


def test_a_prompt_past_the_model_positions_fails_alone(hf, pack, inputs):
    limit = hf.model.config.max_position_embeddings
    too_long = render_user_message("invoice " * limit)
    results = {}

    def ask(key, system, user):
        try:
            results[key] = hf.complete(system, user, inputs[0].grammar).text
        except ValueError as exc:
            results[key] = exc

    threads = [threading.Thread(target=ask, args=("long", inputs[0].system, too_long)),
               threading.Thread(target=ask, args=("fine", inputs[0].system, inputs[0].user))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert isinstance(results["long"], ValueError) and "positions" in str(results["long"])
    assert results["fine"] == hf.complete(inputs[0].system, inputs[0].user, inputs[0].grammar).text


def test_free_text_without_a_grammar_stops_at_the_stop_token(hf, pack):
    system = render_system_prompt(pack, ["expense_report"])
    free = hf.complete(system, render_user_message(REQUESTS[1]), None, max_new_tokens=12)
    loop = hf._complete_alone(system, render_user_message(REQUESTS[1]), None, 12)
    assert free.text == loop.text and 0 < free.new_tokens <= 12


def test_backends_declare_what_they_can_do(hf):
    from pipeline.llm.backends import BACKENDS, OpenAIBackend

    assert set(BACKENDS) == {"hf", "openai"}
    assert hf.capabilities.grammar and hf.capabilities.batching and hf.capabilities.device == "cpu"
    remote = OpenAIBackend(base_url="http://127.0.0.1:9/v1", model="m", send_grammar=False)
    assert not remote.capabilities.grammar and remote.capabilities.device == "remote"
    with pytest.raises(ValueError, match="grammar field"):
        OpenAIBackend(base_url="http://127.0.0.1:9/v1", model="m", grammar_field="guided_regex")


def test_the_graphed_steps_bucketing_writes_what_the_packed_steps_write(hf, inputs, monkeypatch):
    """The CUDA path's bookkeeping on the CPU: rows, tokens and width rounded up to buckets, rows past the
    step's own writing into spare columns; a capture here replays eagerly what a CUDA graph would replay."""
    runner = hf.decoder.runner
    alone = replay(hf, inputs, 1)

    class Replayed:
        def __init__(self, rows, k, width):
            import torch

            self.args = (rows, torch.zeros((rows, k), dtype=torch.long), torch.ones(rows, dtype=torch.long),
                         torch.full((rows,), width - k, dtype=torch.long), width)
            self.out = runner._forward(*self.args)

        def replay(self):
            self.out.copy_(runner._forward(*self.args))

    def capture(rows, k, width):
        graph = Replayed(rows, k, width)
        return graph, graph.args[1], graph.args[2], graph.args[3], graph.out

    monkeypatch.setattr(runner, "_capture", capture)
    monkeypatch.setattr(runner, "packed", False)
    monkeypatch.setattr(runner, "graphs", True)
    together = replay(hf, inputs, len(inputs))
    assert runner.graph_error is None
    assert any(rows > 1 for rows, _, _ in runner._captured)  # batched shapes were "captured"
    assert differences(alone.outputs, together.outputs) == []
    runner._captured.clear()
