"""The translate stage with the real packaged model (SmolLM2-135M GGUF through transformers)."""

import pytest

from pipeline.llm.backends import get_backend
from pipeline.llm.grammar import NONE_LINE
from pipeline.llm.prompt import render_system_prompt
from pipeline.run import run_pipeline
from pipeline.stages.check import check_ir
from pipeline.stages.translate import translate

TODAY = "2024-10-15"
REQUESTS = [
    "Send an invoice for 2k for the deck repair, then get me on the phone about it",
    "what did we spend in the first quarter of 2024?",
    "change Maria Lopez's email to maria@lopez.org",
    "how do I reconcile my bank account",
]


@pytest.fixture(scope="module")
def hf():
    return get_backend("hf")


@pytest.mark.parametrize("query", REQUESTS)
def test_constrained_generation_yields_ir_that_passes_the_check(pack, hf, query):
    translation = translate(query, pack, hf, TODAY)
    check_ir(translation.ir, pack)  # raises if the output is not valid IR
    assert translation.stats["first_output_valid"] is True
    goals = [s["goal"] for s in translation.shortlist]
    assert translation.ir.startswith(f"_goal(g1, {goals[0]}).")


def test_the_llm_may_name_the_goals_itself_within_the_grammar(pack, hf):
    translation = translate(REQUESTS[0], pack, hf, TODAY, goal_choice="llm")
    facts = check_ir(translation.ir, pack).facts
    assert facts and facts[0].predicate == "_goal" or translation.ir.strip() == NONE_LINE


def test_out_of_domain_requests_need_no_llm_call(pack, hf):
    translation = translate("who will win the world cup this year?", pack, hf, TODAY)
    assert translation.ir.strip() == NONE_LINE and translation.attempts == 0 and translation.shortlist == []


def test_the_prompt_comes_from_the_pack_with_foreign_examples(pack):
    prompt = render_system_prompt(pack)
    assert all(f"- {goal}:" in prompt for goal in pack.spec.goals)
    examples = prompt[prompt.index("Examples from another domain"):prompt.index("This domain's goals")]
    assert "book_visit" in examples and not any(goal in examples for goal in pack.spec.goals)


def test_prompts_share_their_opening_so_its_model_state_is_reused(pack):
    # What depends on the request (its goals) comes last, and a goal's block reads the same whichever
    # goals follow it: the prompt of [a, b] opens with the whole prompt of [a], every argument described once.
    one = render_system_prompt(pack, ["expense_report"])
    two = render_system_prompt(pack, ["expense_report", "contact_agent"])
    assert two.startswith(one)
    both = render_system_prompt(pack, ["profit_loss_report", "expense_report"])
    assert both.count("  - _period:") == 1 and both.count("  - _end_date:") == 1
    assert render_system_prompt(pack, ["contact_agent"]).split("This domain's goals")[0] == \
        both.split("This domain's goals")[0]


def test_a_translated_run_keeps_every_artifact(hf):
    run = run_pipeline(REQUESTS[1], "quickbooks", TODAY, translator="hf")
    assert run.translator == "hf" and run.prompt and run.llm_output is not None
    assert run.shortlist and run.shortlist[0]["goal"] == "expense_report"
    assert list(run.timings_ms)[:2] == ["translate", "check"]
    assert run.status == "succeeded", run.failure
    assert run.plan.calls[0].api == "expense_spend_api"


def test_unconstrained_output_is_judged_by_the_check(pack, hf):
    translation = translate(REQUESTS[0], pack, hf, TODAY, constrain=False, max_new_tokens=60)
    assert translation.attempts == (1 if translation.stats["first_output_valid"] else 2)
    if translation.attempts == 2:  # the retry was told why the first answer was rejected
        assert "That answer was rejected" in translation.prompt
    run = run_pipeline(REQUESTS[0], "quickbooks", TODAY, ir=translation.ir)
    assert run.failure is None or run.failure.kind in ("ir_rejected", "domain_error", "no_plan", "out_of_domain")


@pytest.mark.parametrize("k", [1, 2])
def test_shortlist_mode_shows_and_allows_only_the_shortlisted_goals(pack, hf, k):
    translation = translate(REQUESTS[1], pack, hf, TODAY, goal_choice="shortlist", shortlist_k=k)
    shortlisted = [s["goal"] for s in translation.shortlist]
    assert len(shortlisted) == k and shortlisted[0] == "expense_report"
    system = translation.prompt[translation.prompt.index("This domain's goals"):]
    assert all((f"- {goal}:" in system) == (goal in shortlisted) for goal in pack.spec.goals)
    chosen = [f.arguments[1] for f in check_ir(translation.ir, pack).facts if f.predicate == "_goal"]
    assert chosen and set(chosen) <= set(shortlisted)


def test_an_unknown_goal_choice_is_a_clear_error(pack, hf):
    with pytest.raises(ValueError, match="goal_choice must be one of"):
        translate(REQUESTS[1], pack, hf, TODAY, goal_choice="guess")
