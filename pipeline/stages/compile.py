"""Stage `compile`: materialized goals -> task PDDL, deterministically.

Every goal becomes a call object with one var per argument and one for its output. A value given in the
request (or an optional argument's default) is `(has_value v)` in init, and so is an optional argument
left out of the call; a missing one is `(askable v)` (get_info_api may fill it); a dataflow
argument is the producing call's output var. PDDL names are built only from pack identifiers and goal
positions; the values themselves appear only as JSON-escaped comments, so no value can alter the PDDL.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterable
from functools import lru_cache

import jinja2

from pipeline.language.readers import reader
from pipeline.packs.flows import api_constant
from pipeline.packs.pack import Pack
from pipeline.records import Materialized, TaskPDDL

_LETTERS = "xyzwvutsrqponm"


def plan_variables(count: int, taken: Iterable[str] = ()) -> list[str]:
    """x, y, z, ... as in the paper, then v15, v16 for long requests; never a name the domain already has,
    nor one whose `call_` or `_argument` names could be (an argument `q` is a constant of the domain).

    >>> plan_variables(3), plan_variables(3, ["y", "z_top"])
    (['x', 'y', 'z'], ['x', 'w', 'v'])
    """
    taken = set(taken)
    names = []
    for name in itertools.chain(_LETTERS, (f"v{i}" for i in itertools.count(len(_LETTERS) + 1))):
        if len(names) == count:
            break
        if name not in taken and f"call_{name}" not in taken and not any(t.startswith(name + "_") for t in taken):
            names.append(name)
    return names


def wants_predicate(api: str) -> str:
    return "wants_" + api.removesuffix("_api")


@lru_cache(maxsize=2)
def _template(name: str = "task.pddl.j2") -> jinja2.Template:
    env = jinja2.Environment(loader=jinja2.PackageLoader("pipeline.stages", "templates"),
                             undefined=jinja2.StrictUndefined, autoescape=False, keep_trailing_newline=True)
    return env.get_template(name)


def _atom(fact: tuple[str, ...]) -> str:
    return f"({' '.join(fact)})"


def compile_task(materialized: Materialized, pack: Pack, lookups: frozenset[str] = frozenset()) -> TaskPDDL:
    """`lookups`: APIs of goals the request did not ask for, added to find an identifier another goal needs
    (a search): their calls are optional, and an argument that takes their output may still be asked for;
    the planner weighs the two by their costs."""
    if pack.flow_domain is not None:
        return compile_flow_task(materialized, pack)
    optional = {g.goal_id for g in materialized.goals if g.api in lookups}
    outputs = dict(zip((g.goal_id for g in materialized.goals),
                       plan_variables(len(materialized.goals), pack.spec.arguments)))
    calls, variables, init, values, slots = {}, [], [], [], {}
    for goal in materialized.goals:
        out = outputs[goal.goal_id]
        call = f"call_{out}"
        unworded = goal.goal_id in optional and not _worded(goal, pack)
        calls[call] = goal.goal_id
        variables.append(out)
        init += [(wants_predicate(goal.api), call), ("output", call, out)]
        for position, (argument, binding) in enumerate(goal.args.items(), 1):
            if binding.kind == "ref":
                var = outputs[binding.ref]
                if binding.ref in optional and ("askable", var) not in init:
                    init.append(("askable", var))  # found by the lookup, or asked for: whichever costs less
            else:
                var = f"{out}_{argument}"
                variables.append(var)
                if binding.kind in ("value", "default"):
                    init.append(("has_value", var))
                    values.append({"var": var, "json": json.dumps(binding.value, ensure_ascii=True)})
                elif binding.kind == "omitted" and not (unworded and _searched_with(argument, pack)):
                    init.append(("has_value", var))  # optional and not given: bound, so never asked; left out
                else:
                    init.append(("askable", var))
            slots[f"{goal.goal_id}.{argument}"] = var
            init += [(f"arg{position}", call, var), ("has_type", var, argument)]
    goal_facts = [("done", call) for call, goal_id in calls.items() if goal_id not in optional]
    text = _template().render(domain=pack.name, calls=list(calls), vars=variables, init=map(_atom, init),
                              goal=map(_atom, goal_facts), values=values)
    return TaskPDDL(text=text, calls=calls, slots=slots, objects={"call": list(calls), "var": variables},
                    init=init, goal=goal_facts)


def _searched_with(argument: str, pack: Pack) -> bool:
    spec = pack.spec.arguments.get(argument)
    return spec is not None and reader(spec.normalizer).searches


def _worded(goal, pack: Pack) -> bool:
    """Whether a lookup has its words to find by, where it takes any (`search_text`: a search's `?query=`,
    optional in the API): without them it would find whatever comes first, so those words are asked for,
    and the planner asks for the identifier itself instead, the cheaper question."""
    searched = [a for a in goal.args if _searched_with(a, pack)]
    return not searched or any(goal.args[a].kind in ("value", "default") for a in searched)


def compile_flow_task(materialized: Materialized, pack: Pack) -> TaskPDDL:
    """A flow pack's task: each intent is a call whose flow steps are step objects in a `next` chain,
    each step holding `todo` facts for its APIs; the goal is every call past its last step."""
    flow = pack.flow_domain
    calls, steps, init, goal = {}, [], [], []
    names = plan_variables(len(materialized.goals), [api_constant(api) for api in pack.spec.apis])
    for var, materialized_goal in zip(names, materialized.goals):
        call = f"call_{var}"
        calls[call] = materialized_goal.goal_id
        flow_steps = flow.intents[materialized_goal.api]
        names = [f"{var}_s{i}" for i in range(1, len(flow_steps) + 1)] + [f"{var}_end"]
        steps += names
        init.append(("current", call, names[0]))
        init += [("next", a, b) for a, b in zip(names, names[1:])]
        init += [("todo", call, names[i], api_constant(api)) for i, step in enumerate(flow_steps)
                 for api in step.apis]
        goal.append(("current", call, names[-1]))
    text = _template("flow_task.pddl.j2").render(domain=pack.name, calls=list(calls), steps=steps,
                                                  init=map(_atom, init), goal=map(_atom, goal))
    return TaskPDDL(text=text, calls=calls, slots={}, objects={"call": list(calls), "step": steps}, init=init,
                    goal=goal)
