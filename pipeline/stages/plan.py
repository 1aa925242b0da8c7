"""Stage `plan`: the pack's domain PDDL + task PDDL -> Fast Downward (through unified-planning) -> Plan.

The planner runs in its own process group with a time limit; unified-planning kills the whole group when
the limit passes, so no planner process outlives a request. The plan is rendered as in the paper
(`Step 1. x_start_date = "01/01/2023";` ... `Step 3. x = profit_loss_api(x_start_date, x_end_date);`)
and as JSON calls whose arguments are a value, a ref to an earlier call, or a get_info_api question.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
import threading

import unified_planning.shortcuts as up
from unified_planning.engines import PlanGenerationResultStatus as Status
from unified_planning.io import PDDLReader

from pipeline.packs.pack import Pack
from pipeline.records import Materialized, Plan, PlanArg, PlanCall, StageError, TaskPDDL

GET_INFO = "get_info_api"

up.get_environment().credits_stream = None
# Fast Downward writes its intermediate `output.sas` into the current directory, so two planners started
# from one directory (two workers on a host) overwrite each other's task. Each call therefore plans in a
# directory of its own; the working directory belongs to the whole process, hence the lock.
_CWD_LOCK = threading.Lock()


@contextlib.contextmanager
def _own_working_directory(path: str):
    with _CWD_LOCK:
        previous = os.getcwd()
        os.chdir(path)
        try:
            yield
        finally:
            os.chdir(previous)


def _solve(domain_pddl: str, task_text: str, timeout_s: float, alias: str):
    with tempfile.TemporaryDirectory(prefix="nesyplan-") as tmp:
        task_file = os.path.join(tmp, "task.pddl")
        with open(task_file, "w", encoding="utf-8") as f:
            f.write(task_text)
        problem = PDDLReader().parse_problem(os.path.abspath(domain_pddl), task_file)
        with _own_working_directory(tmp), \
                up.OneshotPlanner(name="fast-downward", params={"fast_downward_alias": alias}) as planner:
            return planner.solve(problem, timeout=timeout_s)


def plan(task: TaskPDDL, materialized: Materialized, pack: Pack, timeout_s: float = 20.0,
         alias: str = "lama-first") -> Plan:
    """Solve with Fast Downward. `lama-first` is LAMA's first solution: every plan of these tasks costs
    the same (each call and each question is forced), so the first is optimal."""
    try:
        result = _solve(str(pack.domain_pddl), task.text, timeout_s, alias)
    except Exception as exc:  # a PDDL the reader or planner rejects: the pack or compiler is at fault
        raise StageError("plan", "internal", f"the planner could not read the task: {exc}") from None
    if result.status == Status.TIMEOUT:
        raise StageError("plan", "planner_timeout", f"no plan found within {timeout_s:g} s")
    if result.plan is None or result.status not in (Status.SOLVED_SATISFICING, Status.SOLVED_OPTIMALLY):
        raise StageError("plan", "no_plan", f"no plan reaches every goal ({result.status.name.lower()})")
    actions = [(a.action.name, [str(p) for p in a.actual_parameters]) for a in result.plan.actions]
    if pack.flow_domain is not None:
        return _render_flow(actions, task, materialized, pack)
    return _render(actions, task, materialized)


def _render_flow(actions: list[tuple[str, list[str]]], task: TaskPDDL, materialized: Materialized,
                 pack: Pack) -> Plan:
    """A flow plan: each API call with the calls whose outputs it takes; a line marks each flow step."""
    flow = pack.flow_domain
    api_names = {name.lower(): name for name in flow.apis}
    goals = {g.goal_id: g for g in materialized.goals}
    lines: list[str] = []
    calls: list[PlanCall] = []
    producer: dict[tuple[str, str], int] = {}  # (call object, item) -> index in `calls`
    step_index: dict[str, int] = {}
    for name, params in actions:
        call_obj, step = params[0], params[-1]
        intent = goals[task.calls[call_obj]].api
        if name == "next_step":
            continue
        if step_index.get(call_obj) != step:  # the first API of a flow step: say which step
            step_index[call_obj] = step
            number = int(step.rsplit("_s", 1)[1])
            lines.append(f"-- {intent}, flow step {number}: {flow.intents[intent][number - 1].step}")
        api = api_names[name.lower()]
        spec = flow.apis[api]
        args: dict[str, PlanArg] = {}
        for need in spec.inputs:
            options = [need] if isinstance(need, str) else need
            item = next((o for o in options if (call_obj, o) in producer), options[0])
            args[item] = PlanArg(ref=producer[(call_obj, item)])
        var = "_".join(spec.outputs) or api.lower()
        for item in spec.outputs:
            producer[(call_obj, item)] = len(calls)
        calls.append(PlanCall(api=api, var=var, args=args))
        lines.append(f"{var} = {api}({', '.join(args)});")
    text = "\n".join(line if line.startswith("--") else f"Step {n}. {line}"
                     for n, line in _numbered(lines))
    return Plan(calls=calls, text=text, planner_actions=[f"{n}({', '.join(p)})" for n, p in actions])


def _numbered(lines: list[str]):
    n = 0
    for line in lines:
        if not line.startswith("--"):
            n += 1
        yield n, line


def _render(actions: list[tuple[str, list[str]]], task: TaskPDDL, materialized: Materialized) -> Plan:
    goals = {g.goal_id: g for g in materialized.goals}
    lines: list[str] = []
    # Values the request gave are bound first, in goal order.
    for goal in materialized.goals:
        for argument, binding in goal.args.items():
            if binding.kind == "value":
                var = task.slots[f"{goal.goal_id}.{argument}"]
                lines.append(f"{var} = {json.dumps(binding.value, ensure_ascii=False)};")
    calls: list[PlanCall] = []
    call_index: dict[str, int] = {}  # output var -> index in `calls`
    for name, params in actions:
        if name == GET_INFO:
            var, arg_type = params
            lines.append(f'{var} = {GET_INFO}("{arg_type}");')
            continue
        call_obj, *arg_vars, out = params
        goal = goals[task.calls[call_obj]]
        args: dict[str, PlanArg] = {}
        for (argument, binding), var in zip(goal.args.items(), arg_vars):
            if binding.kind == "value":
                args[argument] = PlanArg(value=binding.value)
            elif binding.kind == "ref":
                args[argument] = PlanArg(ref=call_index[var])
            else:
                args[argument] = PlanArg(get_info=argument)
        call_index[out] = len(calls)
        calls.append(PlanCall(api=name, var=out, args=args))
        lines.append(f"{out} = {name}({', '.join(arg_vars)});")
    text = "\n".join(f"Step {i}. {line}" for i, line in enumerate(lines, 1))
    planner_actions = [f"{n}({', '.join(p)})" for n, p in actions]
    return Plan(calls=calls, text=text, planner_actions=planner_actions)
