"""Stages `compile` and `plan`: task PDDL that no value can break, and real Fast Downward plans."""

import os
import threading
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
from unified_planning.io import PDDLReader

from pipeline.records import Binding, GoalCall, Materialized, StageError, TaskPDDL
from pipeline.stages.check import check_ir
from pipeline.stages.compile import compile_task
from pipeline.stages.materialize import materialize
from pipeline.stages.plan import plan


def materialized(ir, pack):
    return materialize(check_ir(ir, pack), pack, "2024-10-15")


HOSTILE = [
    'a "quoted" value',
    "paren) (:goal (and)) ; (",
    "line one\nline two\n(define (problem evil))",
    "naïve café ☕ 東京 ‮",
    "\\\" ; end\r\n)",
]


@pytest.mark.parametrize("value", HOSTILE)
def test_hostile_values_compile_to_valid_pddl_that_plans(pack, value, tmp_path):
    m = Materialized(goals=[GoalCall(goal_id="g1", api="create_invoice_api", args={
        "invoice_amount": Binding(kind="value", value="10.00"),
        "invoice_detail": Binding(kind="value", value=value)})])
    task = compile_task(m, pack)
    assert value not in task.text or "\n" not in value
    # The task must parse to exactly the objects and goal the compiler meant, whatever the value was.
    (tmp_path / "task.pddl").write_text(task.text, encoding="utf-8")
    problem = PDDLReader().parse_problem(str(pack.domain_pddl), str(tmp_path / "task.pddl"))
    assert sorted(o.name for o in problem.all_objects if o.type.name != "argtype") == \
        sorted(["call_x", "x", "x_invoice_amount", "x_invoice_detail"])
    assert len(problem.goals) == 1
    result = plan(task, m, pack)
    assert result.calls[0].args["invoice_detail"].value == value


def test_compile_is_deterministic(pack):
    ir = ('_goal(g2, contact_agent). _contact_topic(g2, g1). _goal(g1, expense_report). '
          '_period(g1, "Q1 2024").')
    assert compile_task(materialized(ir, pack), pack).text == compile_task(materialized(ir, pack), pack).text


def test_plan_asks_exactly_for_missing_values_and_orders_dataflow(pack):
    ir = ('_goal(g1, contact_agent). _contact_topic(g1, g2). '
          '_goal(g2, profit_loss_report). _period(g2, "2023").')
    m = materialized(ir, pack)
    result = plan(compile_task(m, pack), m, pack)
    apis = [c.api for c in result.calls]
    assert apis == ["profit_loss_api", "contact_us_api"]  # the producer first, whatever the IR order
    contact = result.calls[1]
    assert contact.args["contact_topic"].ref == 0
    assert contact.args["contact_channel"].get_info == "contact_channel"
    assert result.calls[0].args["start_date"].value == "01/01/2023"
    asked = [a for a in result.planner_actions if a.startswith("get_info_api")]
    assert asked == ["get_info_api(x_contact_channel, contact_channel)"]
    lines = result.text.splitlines()
    assert lines[0] == 'Step 1. y_start_date = "01/01/2023";'
    assert 'get_info_api("contact_channel");' in result.text
    assert lines[-1].endswith("x = contact_us_api(y, x_contact_channel);")


def test_a_complete_request_asks_nothing(pack):
    m = materialized('_goal(g1, charge_lookup). _charge_date(g1, "today"). _charge_amount(g1, "$5").', pack)
    result = plan(compile_task(m, pack), m, pack)
    assert not any(a.startswith("get_info_api") for a in result.planner_actions)
    assert result.text.splitlines()[-1] == "Step 3. x = charge_lookup_api(x_charge_date, x_charge_amount);"


# A task no planner solves fast: n+1 pigeons, n holes. Its delete-free relaxation is solvable, so only
# search can find out, and the search space is exponential.
PIGEON_DOMAIN = """(define (domain pigeons) (:requirements :strips :typing) (:types pigeon hole)
 (:predicates (free ?h - hole) (out ?p - pigeon) (in ?p - pigeon ?h - hole))
 (:action put :parameters (?p - pigeon ?h - hole) :precondition (and (free ?h) (out ?p))
  :effect (and (in ?p ?h) (not (free ?h)) (not (out ?p)))))"""


def pigeon_task(n):
    pigeons = " ".join(f"p{i}" for i in range(n + 1))
    holes = " ".join(f"h{i}" for i in range(n))
    init = " ".join([f"(free h{i})" for i in range(n)] + [f"(out p{i})" for i in range(n + 1)])
    goal = " ".join(f"(not (out p{i}))" for i in range(n + 1))
    return (f"(define (problem hard) (:domain pigeons) (:objects {pigeons} - pigeon {holes} - hole)"
            f" (:init {init}) (:goal (and {goal})))")


def wait_for(predicate, timeout):
    deadline = time.monotonic() + timeout
    while not (value := predicate()) and time.monotonic() < deadline:
        time.sleep(0.02)
    return value


def planner_processes(groups=None):
    """Live planner processes: those this process started (its children), or with `groups`, every process
    of those process groups (the planner runs in a group of its own, and a process it leaves behind keeps
    the group). Planners other programs on the machine run are none of this test's business."""
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
            fields = Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()
        except OSError:
            continue
        state, ppid, pgid = fields[0], int(fields[1]), int(fields[3])
        ours = pgid in groups if groups is not None else ppid == os.getpid() and "downward" in cmdline
        if ours and state != "Z":
            found.append((pid, pgid, cmdline))
    return found


def test_planner_timeout_leaves_no_process_behind(tmp_path):
    domain = tmp_path / "domain.pddl"
    domain.write_text(PIGEON_DOMAIN)
    fake_pack = SimpleNamespace(domain_pddl=domain)
    task = TaskPDDL(text=pigeon_task(14), calls={}, slots={})
    seen = []  # the planner's process groups, as they are while it runs
    watcher = threading.Thread(target=lambda: seen.extend(wait_for(planner_processes, 10)), daemon=True)
    watcher.start()
    started = time.monotonic()
    with pytest.raises(StageError) as info:
        plan(task, Materialized(goals=[]), fake_pack, timeout_s=2)
    watcher.join()
    assert seen, "the planner never showed up: the check would be blind"
    assert info.value.kind == "planner_timeout", info.value.message
    assert time.monotonic() - started < 15
    groups = {pgid for _, pgid, _ in seen}
    assert wait_for(lambda: not planner_processes(groups), 5), planner_processes(groups)


def test_an_unsolvable_task_is_no_plan(pack):
    m = Materialized(goals=[GoalCall(goal_id="g1", api="contact_us_api", args={
        "contact_topic": Binding(kind="ref", ref="g1"), "contact_channel": Binding(kind="value", value="chat")})])
    with pytest.raises(StageError) as info:
        plan(compile_task(m, pack), m, pack)
    assert info.value.kind == "no_plan"
