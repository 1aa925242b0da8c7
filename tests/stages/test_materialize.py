"""Stage `materialize`: real clingo over IR + the quickbooks rules + the Python helpers."""

import pytest

from pipeline.records import StageError
from pipeline.stages.check import check_ir
from pipeline.stages.materialize import OUT_OF_DOMAIN, materialize, require_plannable

TODAY = "2024-10-15"


def run(ir, pack, today=TODAY):
    return materialize(check_ir(ir, pack), pack, today)


def bindings(m, goal_id="g1"):
    goal = next(g for g in m.goals if g.goal_id == goal_id)
    return {a: (b.kind, b.value or b.ref) for a, b in goal.args.items()}


def test_a_period_gives_both_dates(pack):
    m = run('_goal(g1, profit_loss_report). _period(g1, "last quarter").', pack)
    assert m.goals[0].api == "profit_loss_api"
    assert bindings(m) == {"start_date": ("value", "07/01/2024"), "end_date": ("value", "09/30/2024")}


def test_explicit_ends_share_a_year(pack):
    m = run('_goal(g1, expense_report). _start_date(g1, "march"). _end_date(g1, "may 2023").', pack)
    assert bindings(m) == {"start_date": ("value", "03/01/2023"), "end_date": ("value", "05/31/2023")}


def test_only_a_start_leaves_the_end_missing(pack):
    m = run('_goal(g1, invoice_sales_report). _start_date(g1, "Q2 2024").', pack)
    assert bindings(m) == {"start_date": ("value", "04/01/2024"), "end_date": ("missing", None)}


def test_normalisers_run_inside_clingo(pack):
    m = run('_goal(g1, update_customer). _customer_given_name(g1, "dr. henry"). '
            '_customer_email(g1, "H.Davis@Mail.com"). _customer_phone(g1, "(617) 555-0101").', pack)
    assert bindings(m) == {"customer_given_name": ("value", "Henry"),
                           "customer_family_name": ("missing", None),
                           "customer_email": ("value", "h.davis@mail.com"),
                           "customer_phone": ("value", "617-555-0101")}


def test_words_that_name_no_value_stay_missing_and_are_shown(pack):
    m = run('_goal(g1, contact_agent). _contact_topic(g1, "the weather"). _contact_channel(g1, "talk").', pack)
    assert bindings(m) == {"contact_topic": ("missing", None), "contact_channel": ("missing", None)}
    assert any("the weather" in u for u in m.unreadable) and any("talk" in u for u in m.unreadable)


def test_dataflow_binds_an_argument_to_another_goals_output(pack):
    m = run('_goal(g1, create_invoice). _invoice_amount(g1, "2k"). _goal(g2, contact_agent). '
            '_contact_topic(g2, g1). _contact_channel(g2, "chat").', pack)
    assert bindings(m, "g2") == {"contact_topic": ("ref", "g1"), "contact_channel": ("value", "chat")}
    assert bindings(m, "g1") == {"invoice_amount": ("value", "2000.00"), "invoice_detail": ("missing", None)}


@pytest.mark.parametrize("ir, error", [
    ('_goal(g1, profit_loss_report). _start_date(g1, "1/31/2024"). _end_date(g1, "1/1/2024").',
     "end_before_start(g1)"),
    ('_goal(g1, profit_loss_report). _period(g1, "Q1 2024"). _start_date(g1, "Q2 2024").',
     "conflicting_values(g1,start_date)"),
    ('_goal(g1, charge_lookup). _goal(g2, contact_agent). _contact_topic(g2, g1).',
     "output_not_accepted(g2,contact_topic,charge)"),
    ('_goal(g1, contact_agent). _contact_topic(g1, g1).', "refers_to_itself(g1,contact_topic)"),
    ('_goal(g1, business_advice). _help_topic(g1, "payroll").', "argument_not_taken(g1,help_topic"),
    ('_goal(g1, product_help). _help_topic(g2, "payroll").', "argument_without_goal(g2,help_topic)"),
])
def test_broken_domain_rules_raise_error_atoms(pack, ir, error):
    m = run(ir, pack)
    assert any(error in e for e in m.errors), m.errors
    with pytest.raises(StageError) as info:
        require_plannable(m)
    assert info.value.kind == "domain_error" and info.value.stage == "materialize"


def test_the_end_before_start_message_is_for_a_person(pack):
    m = run('_goal(g1, profit_loss_report). _start_date(g1, "12/31/2024"). _end_date(g1, "1/1/2024").', pack)
    assert "ends before it starts" in m.errors[0]


def test_no_goal_is_out_of_domain(pack):
    m = run("", pack)
    with pytest.raises(StageError) as info:
        require_plannable(m)
    assert info.value.kind == "out_of_domain" and info.value.message == OUT_OF_DOMAIN


def test_today_changes_relative_dates(pack):
    ir = '_goal(g1, charge_lookup). _charge_date(g1, "yesterday"). _charge_amount(g1, "$35").'
    assert bindings(run(ir, pack, "2024-03-01"))["charge_date"] == ("value", "02/29/2024")
    assert bindings(run(ir, pack, "2023-01-01"))["charge_date"] == ("value", "12/31/2022")
