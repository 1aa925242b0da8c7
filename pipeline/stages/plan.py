"""Stage `plan`: the pack's domain PDDL + task PDDL -> Fast Downward (through unified-planning) -> Plan.

The fast path: each pack's domain is parsed once per process, the task is built in memory from the
compiled facts (its text stays the artifact), and plans are cached by the task's structure: values are
only comments in the task PDDL, so requests with the same goals, missing arguments and refs share one
planner run. The key holds the domain's digest (the pack version) and the planner alias; Fast Downward
runs only on a miss. `fast=False` is the naive path (both files parsed, the planner run every time),
kept to measure against and to check the cache by.

The planner runs in its own process group with a time limit; unified-planning kills the whole group when
the limit passes, so no planner process outlives a request. The plan is rendered as in the paper
(`Step 1. x_start_date = "01/01/2023";` ... `Step 3. x = profit_loss_api(x_start_date, x_end_date);`)
and as JSON calls whose arguments are a value, a ref to an earlier call, or a get_info_api question.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
import threading
from collections import OrderedDict
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import unified_planning.shortcuts as up
from unified_planning.engines import PlanGenerationResultStatus as Status
from unified_planning.io import PDDLReader

from pipeline.observability import metrics
from pipeline.packs.pack import Pack
from pipeline.records import Materialized, Plan, PlanArg, PlanCall, StageError, TaskPDDL
from pipeline.settings import settings

GET_INFO = "get_info_api"
# What a step costs, where a task leaves the planner a choice (a lookup it may call, or the user to ask):
# a question costs the user's time, a call with effects is weighed before a read, a read is cheap.
COSTS = {"ask": 10, "effects": 3, "read": 1}
OPTIMAL_ALIAS = "seq-opt-lmcut"  # the cheapest plan, not the first found

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


Actions = tuple[tuple[str, tuple[str, ...]], ...]  # the planner's plan: (action, parameters) in order


def _run_planner(problem, timeout_s: float, alias: str):
    with tempfile.TemporaryDirectory(prefix="nesyplan-") as tmp, _own_working_directory(tmp), \
            up.OneshotPlanner(name="fast-downward", params={"fast_downward_alias": alias}) as planner:
        return planner.solve(problem, timeout=timeout_s)


def _parse_both(domain_file: str, task_text: str):
    """The naive path's reading: domain and task PDDL parsed from text, for every request."""
    with tempfile.TemporaryDirectory(prefix="nesyplan-") as tmp:
        task_file = os.path.join(tmp, "task.pddl")
        with open(task_file, "w", encoding="utf-8") as f:
            f.write(task_text)
        return PDDLReader().parse_problem(os.path.abspath(domain_file), task_file)


@dataclass(frozen=True)
class ParsedDomain:
    problem: object                        # the domain as a unified-planning problem without objects
    digest: str                            # sha256 of the domain file: the pack version in the cache key
    requires: dict[str, frozenset[str]]    # action -> predicates nothing adds that its precondition needs


def _static_requirements(problem) -> dict[str, frozenset[str]]:
    """For each action, the predicates no action makes true (deleting is allowed) that its precondition
    needs at its top level: when a task makes none of them true, the action can never run."""
    added = {effect.fluent.fluent().name for action in problem.actions for effect in action.effects
             if not effect.value.is_false()}
    requires = {}
    for action in problem.actions:
        needed, todo = set(), list(action.preconditions)
        while todo:
            node = todo.pop()
            if node.is_and():
                todo += node.args
            elif node.is_fluent_exp() and node.fluent().name not in added:
                needed.add(node.fluent().name)
        requires[action.name] = frozenset(needed)
    return requires


@lru_cache(maxsize=32)
def _parsed_domain(domain_file: str, _mtime_ns: int, _size: int) -> ParsedDomain:
    """Parsed again only when the file changes."""
    problem = PDDLReader().parse_problem(domain_file)
    return ParsedDomain(problem, hashlib.sha256(Path(domain_file).read_bytes()).hexdigest(),
                        _static_requirements(problem))


def parsed_domain(pack: Pack) -> ParsedDomain:
    stat = pack.domain_pddl.stat()
    return _parsed_domain(str(pack.domain_pddl.resolve()), stat.st_mtime_ns, stat.st_size)


def _task_problem(task: TaskPDDL, domain: ParsedDomain):
    """The task built in memory on a copy of the parsed domain: its objects, initial facts and goals, and
    only the actions it can use (an action needing a static predicate the task never makes true cannot
    run; Fast Downward would drop it too, after reading and translating it: 500 of them in a large pack)."""
    problem = domain.problem.clone()
    true_in_init = {fact[0] for fact in task.init}
    usable = [a for a in problem.actions if domain.requires[a.name] <= true_in_init]
    problem.clear_actions()
    problem.add_actions(usable)
    objects = {}
    for type_name, names in task.objects.items():
        kind = problem.user_type(type_name)
        for name in names:
            objects[name] = up.Object(name, kind)
            problem.add_object(objects[name])

    def atom(fact):
        arguments = [objects[a] if a in objects else problem.object(a) for a in fact[1:]]
        return problem.fluent(fact[0])(*arguments)

    for fact in task.init:
        problem.set_initial_value(atom(fact), True)
    for fact in task.goal:
        problem.add_goal(atom(fact))
    return problem


def optional_calls(task: TaskPDDL) -> set[str]:
    """The calls of a task whose goal is calls done that the goal leaves out (lookups). A flow pack's goal
    is each call at its flow's end, and a task given as text alone has no facts: neither has any."""
    done = {fact[1] for fact in task.goal if fact[0] == "done"}
    return {call for call in task.calls if call not in done} if done else set()


def has_choices(task: TaskPDDL) -> bool:
    """Whether some call of the task is optional (a lookup): then plans differ in cost."""
    return bool(optional_calls(task))


def with_costs(problem, pack: Pack):
    """The problem with each action's cost (COSTS), to minimise."""
    from unified_planning.model.metrics import MinimizeActionCosts

    def cost(action) -> int:
        if action.name == GET_INFO:
            return COSTS["ask"]
        api = pack.spec.apis.get(action.name)
        return COSTS["effects"] if api is not None and api.effects else COSTS["read"]

    problem.clear_quality_metrics()
    problem.add_quality_metric(MinimizeActionCosts({a: up.Int(cost(a)) for a in problem.actions}))
    return problem


def _structure(task: TaskPDDL) -> str:
    """The task without its comments: what the plan depends on (values are comments only)."""
    return "\n".join(line for line in task.text.splitlines() if not line.lstrip().startswith(";"))


class PlanCache:
    """A bounded LRU of planner results, safe across threads."""

    def __init__(self, size: int):
        self.size, self.hits, self.misses = size, 0, 0
        self._entries: OrderedDict[str, Actions] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: str) -> Actions | None:
        with self._lock:
            actions = self._entries.get(key)
            if actions is None:
                self.misses += 1
            else:
                self._entries.move_to_end(key)
                self.hits += 1
        if self.size > 0:  # a cache turned off is not looked up, only asked
            metrics.plan_cache_lookup(actions is not None)
        return actions

    def put(self, key: str, actions: Actions) -> None:
        if self.size <= 0:
            return
        with self._lock:
            self._entries[key] = actions
            self._entries.move_to_end(key)
            while len(self._entries) > self.size:
                self._entries.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self.hits = self.misses = 0

    def __len__(self) -> int:
        return len(self._entries)


@lru_cache(maxsize=1)
def plan_cache() -> PlanCache:
    """This process's plan cache (NESYPLAN_PLAN_CACHE_SIZE entries; 0 turns it off)."""
    return PlanCache(settings().plan_cache_size)


def _solved_actions(result, timeout_s: float) -> Actions:
    if result.status == Status.TIMEOUT:
        raise StageError("plan", "planner_timeout", f"no plan found within {timeout_s:g} s")
    if result.plan is None or result.status not in (Status.SOLVED_SATISFICING, Status.SOLVED_OPTIMALLY):
        raise StageError("plan", "no_plan", f"no plan reaches every goal ({result.status.name.lower()})")
    return tuple((a.action.name, tuple(str(p) for p in a.actual_parameters)) for a in result.plan.actions)


def _planned_actions(task: TaskPDDL, pack: Pack, timeout_s: float, alias: str, fast: bool) -> tuple[Actions, bool]:
    """The planner's actions for the task, and whether they came from the cache."""
    choices = has_choices(task)
    alias = OPTIMAL_ALIAS if choices else alias

    def costed(problem):
        return with_costs(problem, pack) if choices else problem
    try:
        if not fast:
            return _solved_actions(_run_planner(costed(_parse_both(str(pack.domain_pddl), task.text)), timeout_s,
                                                alias), timeout_s), False
        domain = parsed_domain(pack)
        key = hashlib.sha256(f"{domain.digest}\n{alias}\n{_structure(task)}".encode()).hexdigest()
        cached = plan_cache().get(key)
        if cached is not None:
            return cached, True
        # A task given only as text (no facts: written by hand, not compiled) is read from its text.
        problem = _task_problem(task, domain) if task.goal else _parse_both(str(pack.domain_pddl), task.text)
        result = _run_planner(costed(problem), timeout_s, alias)
    except StageError:
        raise
    except Exception as exc:  # a PDDL the reader or planner rejects: the pack or compiler is at fault
        raise StageError("plan", "internal", f"the planner could not read the task: {exc}") from None
    actions = _solved_actions(result, timeout_s)  # a time-out or no plan is never cached
    plan_cache().put(key, actions)
    return actions, False


def plan(task: TaskPDDL, materialized: Materialized, pack: Pack, timeout_s: float = 20.0,
         alias: str = "lama-first", fast: bool = True) -> Plan:
    """Solve with Fast Downward. `lama-first` is LAMA's first solution: where every call and question is
    forced, every plan costs the same and the first is optimal. A task with a lookup to weigh against a
    question is solved for the cheapest plan (COSTS, OPTIMAL_ALIAS)."""
    actions, cached = _planned_actions(task, pack, timeout_s, alias, fast)
    actions = [(name, list(params)) for name, params in actions]
    if pack.flow_domain is not None:
        result = _render_flow(actions, task, materialized, pack)
    else:
        result = _render(actions, task, materialized)
    result.cached = cached
    return result


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
    lookups = {task.calls[call] for call in optional_calls(task)}
    performed = {task.calls[params[0]] for name, params in actions if name != GET_INFO}
    # Values the request gave are bound first, in goal order (a lookup's only where it is called).
    for goal in materialized.goals:
        if goal.goal_id in lookups and goal.goal_id not in performed:
            continue
        for argument, binding in goal.args.items():
            if binding.kind in ("value", "default"):
                var = task.slots[f"{goal.goal_id}.{argument}"]
                note = "  (default)" if binding.kind == "default" else ""
                lines.append(f"{var} = {json.dumps(binding.value, ensure_ascii=False)};{note}")
    calls: list[PlanCall] = []
    call_index: dict[str, int] = {}  # output var -> index in `calls`
    asked = {params[0] for name, params in actions if name == GET_INFO}
    finds: dict[str, list[str]] = {}  # lookup goal -> the arguments it finds, for the plan's text
    for goal in materialized.goals:
        for argument, binding in goal.args.items():
            if binding.kind == "ref" and binding.ref in lookups and task.slots[f"{goal.goal_id}.{argument}"] not in asked:
                finds.setdefault(binding.ref, []).append(argument)
    for name, params in actions:
        if name == GET_INFO:
            var, arg_type = params
            lines.append(f'{var} = {GET_INFO}("{arg_type}");')
            continue
        call_obj, *arg_vars, out = params
        goal = goals[task.calls[call_obj]]
        args: dict[str, PlanArg] = {}
        shown = []
        for (argument, binding), var in zip(goal.args.items(), arg_vars):
            if binding.kind == "omitted":  # an optional argument nobody gave: the call leaves it out
                continue
            shown.append(var)
            if binding.kind in ("value", "default"):
                args[argument] = PlanArg(value=binding.value, default=binding.kind == "default")
            elif binding.kind == "ref" and var not in asked:  # a lookup's output, unless asked for instead
                args[argument] = PlanArg(ref=call_index[var])
            else:
                args[argument] = PlanArg(get_info=argument)
        call_index[out] = len(calls)
        calls.append(PlanCall(api=name, var=out, goal_id=goal.goal_id, args=args, lookup=goal.goal_id in lookups))
        note = f"  (a lookup: finds {', '.join(dict.fromkeys(finds[goal.goal_id]))})" if goal.goal_id in finds else ""
        lines.append(f"{out} = {name}({', '.join(shown)});{note}")
    text = "\n".join(f"Step {i}. {line}" for i, line in enumerate(lines, 1))
    planner_actions = [f"{n}({', '.join(p)})" for n, p in actions]
    return Plan(calls=calls, text=text, planner_actions=planner_actions)
