"""The hf backend's fast path with the real packaged model: jump-forward over text the grammar forces,
and the model state of a prompt's opening reused by prompts that share it."""

import pytest

from pipeline.llm.backends import get_backend
from pipeline.llm.prompt import render_system_prompt, render_user_message
from pipeline.stages.translate import translate

TODAY = "2024-10-15"
REQUESTS = [
    "Send an invoice for 2k for the deck repair, then get me on the phone about it",
    "what did we spend in the first quarter of 2024?",
    "change Maria Lopez's email to maria@lopez.org",
]


@pytest.fixture(scope="module")
def hf():
    backend = get_backend("hf")
    yield backend
    backend.jump_forward = True


@pytest.mark.parametrize("query", REQUESTS)
def test_jump_forward_writes_what_token_by_token_decoding_writes(pack, hf, query):
    hf.jump_forward = False
    slow = translate(query, pack, hf, TODAY)
    hf.jump_forward = True
    fast = translate(query, pack, hf, TODAY)
    assert fast.raw == slow.raw
    assert slow.stats["forced_tokens"] == 0 and slow.stats["decoded_tokens"] >= slow.stats["new_tokens"]
    # The goal names and the IR's punctuation are forced: the model decodes far fewer tokens.
    assert fast.stats["forced_tokens"] > 0
    assert fast.stats["decoded_tokens"] * 2 < slow.stats["decoded_tokens"]


def test_a_prompt_reuses_the_state_of_the_opening_it_shares_and_writes_the_same(pack, hf):
    single = render_system_prompt(pack, ["expense_report"])
    double = render_system_prompt(pack, ["expense_report", "contact_agent"])
    user = render_user_message(REQUESTS[0])
    hf.forget_prompts()
    cold = hf.complete(double, user, max_new_tokens=12)
    hf.forget_prompts()
    hf.complete(single, user, max_new_tokens=1)
    warm = hf.complete(double, user, max_new_tokens=12)
    # Only the second goal's lines and the request are computed; the output is that of a cold start.
    assert warm.stats["prompt_tokens_computed"] < cold.stats["prompt_tokens_computed"] // 3
    assert warm.text == cold.text
    again = hf.complete(double, user, max_new_tokens=12)
    assert again.stats["prompt_tokens_computed"] < warm.stats["prompt_tokens_computed"]


def test_warm_up_computes_the_static_prompt_before_the_first_request(pack, hf):
    hf.forget_prompts()
    hf.warm_up(render_system_prompt(pack))
    first = hf.complete(render_system_prompt(pack, ["profit_loss_report"]), render_user_message(REQUESTS[1]),
                        max_new_tokens=4)
    assert first.stats["prompt_tokens_computed"] < first.prompt_tokens // 2


def test_a_warmed_up_worker_computes_only_the_request_and_its_goals(hf):
    from pipeline.packs.pack import PackError
    from pipeline.run import run_pipeline, warm_up

    hf.forget_prompts()
    took = warm_up(["quickbooks"], "hf")
    assert set(took) == {"model", "quickbooks"}
    run = run_pipeline(REQUESTS[1], "quickbooks", TODAY, translator="hf")
    assert run.status == "succeeded", run.failure
    assert run.llm_stats["prompt_tokens_computed"] < run.llm_stats["prompt_tokens"] // 2
    with pytest.raises(PackError):
        warm_up(["no_such_pack"])
