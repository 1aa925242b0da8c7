"""The scorer itself: the SPEC's success criterion must fail wrong plans, and the oracle's IR must be
what a perfect translator would emit."""

import pytest

from pipeline.evaluation.calls import categories_of, evaluate, oracle_ir, plan_matches, score, summarize
from pipeline.records import Failure, Plan, PlanArg, PlanCall, Run
from pipeline.run import run_pipeline

GOLD = [
    {"api": "profit_loss_api", "args": {"start_date": "07/01/2024", "end_date": "09/30/2024"}},
    {"api": "contact_us_api", "args": {"contact_topic": {"ref": 0}, "contact_channel": None}},
]


def make_plan(*calls):
    return Plan(calls=[PlanCall(api=api, var=f"v{i}", args=args) for i, (api, args) in enumerate(calls)],
                text="", planner_actions=[])


REPORT = ("profit_loss_api", {"start_date": PlanArg(value="07/01/2024"), "end_date": PlanArg(value="09/30/2024")})


def contact(ref=0, channel=PlanArg(get_info="contact_channel")):
    return ("contact_us_api", {"contact_topic": PlanArg(ref=ref), "contact_channel": channel})


def test_the_right_plan_matches():
    assert plan_matches(GOLD, make_plan(REPORT, contact()))


@pytest.mark.parametrize("wrong", [
    make_plan(REPORT),                                                    # a call missing
    make_plan(REPORT, contact(), ("advice_api", {})),                     # an extra call
    make_plan(("profit_loss_api", {"start_date": PlanArg(value="07/01/2024"),
                                   "end_date": PlanArg(value="09/29/2024")}), contact()),   # a wrong value
    make_plan(("expense_spend_api", REPORT[1]), contact()),               # a wrong api
    make_plan(REPORT, contact(channel=PlanArg(value="chat"))),            # a guess where it must ask
    make_plan(("profit_loss_api", {"start_date": PlanArg(value="07/01/2024"),
                                   "end_date": PlanArg(get_info="end_date")}), contact()),  # asks for a given value
    make_plan(REPORT, ("contact_us_api", {"contact_topic": PlanArg(value="report"),
                                          "contact_channel": PlanArg(get_info="contact_channel")})),  # no ref
    make_plan(REPORT, contact(ref=1)),                                    # a ref to itself
    make_plan(contact(ref=1), REPORT),                                    # the producer comes after
])
def test_wrong_plans_fail(wrong):
    assert not plan_matches(GOLD, wrong)


def test_refs_follow_the_pairing_not_the_positions():
    gold = [{"api": "create_invoice_api", "args": {"invoice_amount": "5.00", "invoice_detail": "a"}},
            {"api": "create_invoice_api", "args": {"invoice_amount": "6.00", "invoice_detail": "b"}},
            {"api": "contact_us_api", "args": {"contact_topic": {"ref": 1}, "contact_channel": "chat"}}]
    inv = lambda amount, detail: ("create_invoice_api", {"invoice_amount": PlanArg(value=amount),  # noqa: E731
                                                         "invoice_detail": PlanArg(value=detail)})
    chat = PlanArg(value="chat")
    assert plan_matches(gold, make_plan(inv("6.00", "b"), inv("5.00", "a"), contact(ref=0, channel=chat)))
    assert not plan_matches(gold, make_plan(inv("6.00", "b"), inv("5.00", "a"), contact(ref=1, channel=chat)))


def test_error_and_ood_records_need_the_matching_failure():
    ood = {"id": "o", "ood": True, "calls": []}
    err = {"id": "e", "error": "end_before_start", "calls": []}
    failed = lambda kind: Run(domain="quickbooks", today="2024-01-01", status="failed",  # noqa: E731
                              failure=Failure(stage="materialize", kind=kind, message="m"))
    assert score(ood, failed("out_of_domain"))[0]
    assert not score(ood, failed("domain_error"))[0]
    assert score(err, failed("domain_error"))[0]
    assert not score(err, failed("out_of_domain"))[0]
    planned = Run(domain="quickbooks", today="2024-01-01", status="succeeded", plan=make_plan(REPORT))
    assert not score(ood, planned)[0]


def test_oracle_ir_round_trips_through_the_pipeline(pack):
    record = {"id": "t1", "query": "q", "today": "2024-10-15",
              "tags": {"goals": 2, "complete": False, "dataflow": True}, "calls": GOLD}
    ir = oracle_ir(record, pack)
    assert "_goal(g1, profit_loss_report)." in ir and "_contact_topic(g2, g1)." in ir
    assert "contact_channel" not in ir  # a null argument is simply not given
    run = run_pipeline("q", "quickbooks", "2024-10-15", ir)
    assert score(record, run) == (True, "")


def test_oracle_error_records_use_the_intended_calls(pack):
    record = {"id": "t2", "query": "q", "today": "2024-10-15", "error": "end_before_start", "calls": [],
              "intended": [{"api": "expense_spend_api", "args": {"start_date": "05/01/2024",
                                                                 "end_date": "04/01/2024"}}]}
    run = run_pipeline("q", "quickbooks", "2024-10-15", oracle_ir(record, pack))
    assert run.failure.kind == "domain_error"
    assert score(record, run)[0]


def test_summary_counts_categories_and_lists_failures(pack):
    records = [
        {"id": "a", "today": "2024-10-15", "tags": {"goals": 1, "complete": True, "dataflow": False},
         "calls": [{"api": "advice_api", "args": {}}]},
        {"id": "b", "today": "2024-10-15", "tags": {"goals": 1, "complete": True, "dataflow": False},
         "calls": [{"api": "help_api", "args": {"help_topic": "payroll"}}]},
        {"id": "c", "today": "2024-10-15", "ood": True, "calls": [],
         "tags": {"goals": 0, "complete": True, "dataflow": False}},
    ]
    # A translator that always answers with advice: right for a, wrong for b and c.
    results = evaluate(records, lambda r: "_goal(g1, business_advice).",
                       lambda r, ir: run_pipeline("", "quickbooks", r["today"], ir))
    summary = summarize(results)
    assert (summary["total"], summary["success"], summary["rate"]) == (3, 1, round(1 / 3, 4))
    assert summary["categories"]["single goal: help_api"] == {"n": 1, "success": 0, "rate": 0.0}
    assert summary["categories"]["out of domain"]["success"] == 0
    assert [f["id"] for f in summary["failures"]] == ["b", "c"]
    assert "plan differs" in summary["failures"][0]["reason"]
    assert set(summary["latency_ms"]) >= {"check", "materialize", "compile", "plan"}


def test_categories_follow_the_tags():
    assert categories_of({"tags": {"goals": 2, "complete": False, "dataflow": True}, "calls": []}) == \
        ["incomplete", "2 goals, with dataflow"]
    assert categories_of({"error": "x"}) == ["errors (domain rule broken)"]
