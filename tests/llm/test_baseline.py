"""The LLM-only baseline (`eval --translator baseline-hf`): its answer's shape, how the answer becomes a
plan or a failure, and one request with the real model."""

import json

from pipeline.llm.baseline import calls_grammar, parse_calls, run_baseline
from pipeline.packs.pack import load_pack
from pipeline.records import Failure, Plan
from pipeline.run import backend_for
from tests.llm.test_grammar import accepts, compiler  # noqa: F401 - the fixture

PACK = load_pack("quickbooks")


def call(api: str, **args) -> dict:
    return {"api": api, "args": args}


def test_the_grammar_holds_each_call_to_its_own_parameters(compiler):  # noqa: F811
    grammar = calls_grammar(PACK)
    answer = [call("charge_lookup_api", charge_date="02/03/2024", charge_amount=None),
              call("contact_us_api", contact_topic="$0", contact_channel="any value at all")]
    assert accepts(compiler, grammar, json.dumps(answer))  # values, order and count: the model's choice
    assert accepts(compiler, grammar, "[]")
    assert accepts(compiler, grammar, json.dumps({"error": "the period ends before it starts"}))
    assert not accepts(compiler, grammar, json.dumps([call("refund_api", amount="5")]))
    assert not accepts(compiler, grammar, json.dumps([call("help_api", contact_topic="x")]))  # not its own
    assert not accepts(compiler, grammar, json.dumps([call("help_api")]))  # every parameter is given
    assert not accepts(compiler, grammar, json.dumps([call("help_api", help_topic=5)]))  # a string or null


def test_null_asks_for_the_value_and_a_dollar_index_refers_to_an_earlier_call():
    text = json.dumps([call("charge_lookup_api", charge_date="02/03/2024", charge_amount=None),
                       call("contact_us_api", contact_topic="$0", contact_channel="chat")])
    plan = parse_calls("Here you go: " + text + " and some words after it", PACK)
    assert isinstance(plan, Plan) and [c.api for c in plan.calls] == ["charge_lookup_api", "contact_us_api"]
    assert plan.calls[0].args["charge_amount"].get_info == "charge_amount"
    assert plan.calls[0].args["charge_date"].value == "02/03/2024"
    assert plan.calls[1].args["contact_topic"].ref == 0


def test_an_answer_that_is_no_plan_says_which_failure_it_is():
    assert parse_calls("[]", PACK).kind == "out_of_domain"
    assert parse_calls('{"error": "ends before it starts"}', PACK).kind == "domain_error"
    for text in ("I cannot help with that.", json.dumps([call("refund_api")]), '{"calls": 1}', '[{"api": '):
        failure = parse_calls(text, PACK)
        assert isinstance(failure, Failure) and failure.kind == "ir_rejected", text


def test_a_request_with_the_real_model_gives_a_parsable_answer_in_the_pipelines_record():
    run = run_baseline("email me the income statement covering the prior month", "2025-03-10", PACK, backend_for("hf"))
    assert run.llm_stats["first_output_valid"] and run.translator == "baseline-hf"
    assert run.status in ("succeeded", "failed") and run.llm_output
    if run.plan is not None:
        assert run.plan.calls and all(c.api in PACK.spec.apis for c in run.plan.calls)
    else:
        assert run.failure.kind in ("out_of_domain", "domain_error")
