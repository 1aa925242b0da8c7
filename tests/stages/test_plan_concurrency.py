"""Planners running at once, in separate processes started from one directory, must not mix tasks."""

import multiprocessing

from pipeline.run import run_pipeline

REQUESTS = [
    ('_goal(g1, expense_report). _period(g1, "Q2 2024").', "expense_spend_api"),
    ('_goal(g1, update_customer). _customer_given_name(g1, "Ana").', "update_customer_api"),
    ('_goal(g1, product_help). _help_topic(g1, "payroll").', "help_api"),
    ('_goal(g1, charge_lookup). _charge_amount(g1, "$9").', "charge_lookup_api"),
]


def plan_apis(index):
    ir, _ = REQUESTS[index % len(REQUESTS)]
    run = run_pipeline("q", "quickbooks", "2024-10-15", ir)
    return [c.api for c in run.plan.calls] if run.plan else run.failure.message


def test_concurrent_planner_processes_keep_their_own_tasks():
    with multiprocessing.get_context("spawn").Pool(4) as pool:
        results = pool.map(plan_apis, range(24))
    assert results == [[REQUESTS[i % len(REQUESTS)][1]] for i in range(24)]
