"""`nesyplan validate DOMAIN`: load a pack and report every inconsistency with its file and line."""

from __future__ import annotations

import re
import string
from pathlib import Path

from clingo import ast
from clingo.ast import ASTType
from pydantic import BaseModel
from unified_planning.io import PDDLReader

from pipeline.language.words import known_lists
from pipeline.packs.flows import FlowSpecError, check_flow_domain, plan_violations
from pipeline.packs.pack import Pack, PackError, load_pack
from pipeline.records import CheckedIR, IRFact, StageError
from pipeline.stages.check import check_ir
from pipeline.stages.compile import wants_predicate
from pipeline.stages.materialize import Helpers, materialize
from pipeline.stages.plan import GET_INFO
from pipeline.values.normalizers import NORMALIZERS

IR_EXTRA_NORMALIZERS = ("period", "full_name")
# What the stages read from a model: the rules must derive these.
GOAL_PLAN_BATCH = 20  # goals planned together by `_check_goal_plans`
REQUIRED_HEADS = {("goal", 2), ("arg", 3), ("missing", 2), ("error", 1)}


class Problem(BaseModel):
    file: str
    line: int | None = None
    message: str

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        return f"{where}: {self.message}"


def validate_pack(name: str) -> list[Problem]:
    try:
        pack = load_pack(name)
    except PackError as exc:
        return [Problem(file=f, line=line, message=m) for f, line, m in exc.problems]
    flow = pack.spec.flow is not None
    problems = _check_spec(pack) + _check_rules(pack) + (_check_flow_domain(pack) if flow else _check_domain(pack))
    if not problems:  # these need a consistent pack to run at all
        problems += _check_prompt(pack) + _check_examples(pack) + _check_runs(pack)
    if not problems:
        problems += _check_flow_plans(pack) if flow else _check_goal_plans(pack)
    return problems


def _check_spec(pack: Pack) -> list[Problem]:
    spec, file = pack.spec, str(pack.yaml_path)
    out: list[Problem] = []

    def report(key: str, message: str) -> None:
        out.append(Problem(file=file, line=pack.line_of(key), message=message))

    produced = {api.produces for api in spec.apis.values()}
    used_arguments = {a for api in spec.apis.values() for a in api.arguments}
    for goal_name, goal in spec.goals.items():
        if goal.api not in spec.apis:
            report(f"goals.{goal_name}.api", f"goal {goal_name} names unknown api {goal.api!r}")
    for api_name, api in spec.apis.items():
        for argument in api.arguments:
            if argument not in spec.arguments:
                report(f"apis.{api_name}", f"api {api_name} takes argument {argument!r}, which has no type")
        if not any(g.api == api_name for g in spec.goals.values()):
            report(f"apis.{api_name}", f"api {api_name} is the api of no goal")
        for before in api.after:
            if before not in spec.apis:
                report(f"apis.{api_name}.after", f"api {api_name} comes after unknown api {before!r}")
        for argument, default in api.optional.items():
            spec_arg = spec.arguments.get(argument)
            if default is not None and spec_arg is not None and spec_arg.values and default not in spec_arg.values:
                report(f"apis.{api_name}.optional.{argument}", f"api {api_name}: the default {default!r} of "
                                                               f"{argument} is not one of its values")
        if api.http is not None:
            named = [*api.http.body.values(), *api.http.query.values(),
                     *(f for _, f, _, _ in string.Formatter().parse(api.http.path) if f)]
            for argument in named:
                if argument not in api.arguments:
                    report(f"apis.{api_name}.http", f"api {api_name}: http names {argument!r}, which is not "
                                                    f"one of its arguments ({', '.join(api.arguments)})")
            if api.http.auth and api.http.auth not in spec.http_auths:
                report(f"apis.{api_name}.http.auth", f"api {api_name}: http is sent with credentials "
                                                     f"{api.http.auth!r}, which http_auths does not name")
    for arg_name, arg in spec.arguments.items():
        key = f"arguments.{arg_name}"
        if arg.normalizer not in NORMALIZERS:
            report(f"{key}.normalizer", f"argument {arg_name}: unknown normalizer {arg.normalizer!r} "
                                        f"(known: {', '.join(NORMALIZERS)})")
        if arg.normalizer == "choice" and not arg.values:
            report(key, f"argument {arg_name} uses normalizer 'choice' but lists no values")
        for value in arg.synonyms:
            if value not in arg.values:
                report(f"{key}.synonyms", f"argument {arg_name}: synonyms for {value!r}, which is not a value")
        for kind in arg.accepts_output:
            if kind not in produced:
                report(f"{key}.accepts_output", f"argument {arg_name} accepts output {kind!r}, "
                                                f"which no api produces")
        if arg_name not in used_arguments:
            report(key, f"argument {arg_name} is taken by no api")
    for extra_name, extra in spec.ir_extra.items():
        for argument in extra.gives:
            if argument not in spec.arguments:
                report(f"ir_extra.{extra_name}", f"IR predicate _{extra_name} gives unknown argument {argument!r}")
        if extra.normalizer not in IR_EXTRA_NORMALIZERS:
            report(f"ir_extra.{extra_name}.normalizer", f"IR predicate _{extra_name}: unknown normalizer "
                                                        f"{extra.normalizer!r} (known: {', '.join(IR_EXTRA_NORMALIZERS)})")
        if extra_name in spec.arguments:
            report(f"ir_extra.{extra_name}", f"IR predicate _{extra_name} is also an argument")
    lists = known_lists()
    for list_name in spec.lexicon:
        if list_name not in lists:
            report(f"lexicon.{list_name}", f"lexicon: no English word list {list_name!r} to add words to "
                                           f"(known: {', '.join(lists)})")
    return out


def _parse_rules(file: Path, out: list[Problem]) -> list[ast.AST]:
    statements: list[ast.AST] = []
    messages: list[str] = []
    try:
        ast.parse_files([str(file)], statements.append, logger=lambda _c, m: messages.append(m))
    except RuntimeError:
        for message in messages or ["syntax error"]:
            m = re.match(r"(?P<file>[^:]+):(?P<line>\d+):\d+(?:-\d+)?: (?P<msg>.*)", message.strip())
            if m:
                out.append(Problem(file=str(file), line=int(m["line"]), message=m["msg"].strip()))
            else:
                out.append(Problem(file=str(file), message=message.strip()))
    return statements


class _RuleVisitor(ast.Transformer):
    """Collects predicates used in heads and bodies, and @functions, with their lines."""

    def __init__(self) -> None:
        self.file = ""
        self.heads: dict[tuple[str, int], tuple[str, int]] = {}  # predicate -> (file, line)
        self.uses: dict[tuple[str, int], tuple[str, int]] = {}
        self.externals: dict[str, tuple[str, int]] = {}
        self._in_head = False

    def visit_Rule(self, rule):
        self._in_head = True
        self.visit(rule.head)
        self._in_head = False
        for literal in rule.body:
            self.visit(literal)
        return rule

    def visit_Defined(self, defined):
        """`#defined p/n.`: the pack says p/n may have no rule (e.g. no argument in a generated pack)."""
        self.heads.setdefault((defined.name, defined.arity), (self.file, defined.location.begin.line))
        return defined

    def visit_SymbolicAtom(self, atom):
        symbols = atom.symbol.arguments if atom.symbol.ast_type == ASTType.Pool else [atom.symbol]
        for symbol in symbols:
            if symbol.ast_type == ASTType.Function:
                key = (symbol.name, len(symbol.arguments))
                target = self.heads if self._in_head else self.uses
                target.setdefault(key, (self.file, symbol.location.begin.line))
        self.visit_children(atom)
        return atom

    def visit_Function(self, function):
        if function.external:
            self.externals.setdefault(function.name, (self.file, function.location.begin.line))
        self.visit_children(function)
        return function


def _check_rules(pack: Pack) -> list[Problem]:
    out: list[Problem] = []
    if not pack.rule_files:
        return [Problem(file=str(pack.yaml_path.parent.parent.parent / "asp_rules" / pack.name),
                        message="the pack has no rule files (*.lp)")]
    visitor = _RuleVisitor()
    for file in pack.rule_files:
        visitor.file = str(file)
        for statement in _parse_rules(file, out):
            if statement.ast_type == ASTType.Script:
                out.append(Problem(file=str(file), line=statement.location.begin.line,
                                   message="#script in a rule pack: helpers belong in Python normalisers"))
            visitor.visit(statement)
    if out:
        return out
    ir_predicates = pack.ir_predicates()
    facts_predicates = {("goal_api", 2), ("api_arg", 3), ("optional_arg", 2), ("produces", 2), ("accepts_output", 2), ("today", 1),
                        ("ir_extra", 1), ("ir_extra_gives", 2)}
    defined = set(visitor.heads) | facts_predicates | {(p, a) for p, a in ir_predicates.items()}
    for key, (file, line) in visitor.uses.items():
        name, arity = key
        if name.startswith("_") and ir_predicates.get(name) != arity:
            out.append(Problem(file=file, line=line,
                               message=f"rule reads {name}/{arity}, which is not an IR predicate of the pack"))
        elif key not in defined:
            out.append(Problem(file=file, line=line,
                               message=f"rule reads {name}/{arity}, which no rule or pack fact defines"))
    for name, arity in ir_predicates.items():
        if (name, arity) not in visitor.uses:
            out.append(Problem(file=str(pack.yaml_path), line=pack.line_of(f"arguments.{name[1:]}") or
                               pack.line_of(f"ir_extra.{name[1:]}"),
                               message=f"no rule reads IR predicate {name}/{arity}"))
    for name, arity in sorted(REQUIRED_HEADS - set(visitor.heads)):
        out.append(Problem(file=str(pack.rule_files[0].parent), message=f"no rule derives {name}/{arity}"))
    for name, (file, line) in visitor.externals.items():
        if name.startswith("_") or not callable(getattr(Helpers, name, None)):
            out.append(Problem(file=file, line=line, message=f"rule calls @{name}, which is no helper"))
    error_names = {m.group(1) for f in pack.rule_files for m in re.finditer(r"error\((\w+)", f.read_text())}
    for name in sorted(error_names - set(pack.spec.errors)):
        out.append(Problem(file=str(pack.yaml_path), line=pack.line_of("errors"),
                           message=f"error atom {name!r} has no description under errors:"))
    return out


def _check_domain(pack: Pack) -> list[Problem]:
    file = str(pack.domain_pddl)
    if not pack.domain_pddl.is_file():
        return [Problem(file=file, message="domain.pddl is missing")]
    text = pack.domain_pddl.read_text(encoding="utf-8")
    try:
        problem = PDDLReader().parse_problem(file)
    except Exception as exc:  # the reader's own errors say what and where
        return [Problem(file=file, message=f"invalid PDDL: {exc}")]

    def line_of(pattern: str) -> int | None:
        m = re.search(pattern, text)
        return text.count("\n", 0, m.start()) + 1 if m else None

    out: list[Problem] = []
    actions = {a.name: a for a in problem.actions}
    fluents = {f.name for f in problem.fluents}
    for api_name, api in pack.spec.apis.items():
        action = actions.get(api_name)
        if action is None:
            out.append(Problem(file=file, message=f"no action for api {api_name}"))
            continue
        expected = len(api.arguments) + 2  # the call, its arguments, its output
        if len(action.parameters) != expected:
            out.append(Problem(file=file, line=line_of(rf"\(:action\s+{api_name}\b"),
                               message=f"action {api_name} has {len(action.parameters)} parameters; "
                                       f"its api needs {expected} (call, {', '.join(api.arguments) or 'no arguments'}, output)"))
        if wants_predicate(api_name) not in fluents:
            out.append(Problem(file=file, message=f"no predicate {wants_predicate(api_name)} for api {api_name}"))
    for action_name in actions:
        if action_name not in pack.spec.apis and action_name != GET_INFO:
            out.append(Problem(file=file, line=line_of(rf"\(:action\s+{action_name}\b"),
                               message=f"action {action_name} is no api of the pack"))
    if GET_INFO not in actions:
        out.append(Problem(file=file, message=f"no {GET_INFO} action: missing values could not be asked for"))
    objects = {o.name for o in problem.all_objects}
    for argument in pack.spec.arguments:
        if argument not in objects:
            out.append(Problem(file=file, line=line_of(r"\(:constants"),
                               message=f"argument type {argument} is not a constant of the domain"))
    return out


def _check_flow_domain(pack: Pack) -> list[Problem]:
    """A flow pack: its flows make sense (pipeline.packs.flows), every goal is an intent with a flow, every
    flow API is an action over (call, step), and the domain has no other action than next_step."""
    file = str(pack.domain_pddl)
    try:
        flow = pack.flow_domain
        check_flow_domain(flow)
    except (FlowSpecError, ValueError) as exc:
        return [Problem(file=str(pack.yaml_path), line=pack.line_of("flow"), message=f"flow: {exc}")]
    out = [Problem(file=str(pack.yaml_path), line=pack.line_of(f"goals.{goal}"),
                   message=f"goal {goal} has no flow under flow.intents")
           for goal in pack.spec.goals if goal not in flow.intents]
    if not pack.domain_pddl.is_file():
        return out + [Problem(file=file, message="domain.pddl is missing")]
    try:
        problem = PDDLReader().parse_problem(file)
    except Exception as exc:  # the reader's own errors say what and where
        return out + [Problem(file=file, message=f"invalid PDDL: {exc}")]
    actions = {a.name.lower(): a for a in problem.actions}
    for api in flow.apis:
        action = actions.get(api.lower())
        if action is None:
            out.append(Problem(file=file, message=f"no action for flow API {api}"))
        elif len(action.parameters) != 2:
            out.append(Problem(file=file, message=f"action {api} has {len(action.parameters)} parameters; "
                                                  "a flow API takes (call, step)"))
    known = {api.lower() for api in flow.apis} | {"next_step"}
    out += [Problem(file=file, message=f"action {name} is no API of the flow") for name in actions if name not in known]
    return out


def _check_flow_plans(pack: Pack) -> list[Problem]:
    """Plan every intent and judge the plan with the planner-independent flow checker."""
    from pipeline.run import run_pipeline

    out = []
    for intent in pack.spec.goals:
        run = run_pipeline(f"validate {intent}", pack.name, "2024-01-01", f"_goal(g1, {intent}).\n")
        if run.plan is None:
            out.append(Problem(file=str(pack.domain_pddl), message=f"intent {intent}: no plan ({run.failure.message if run.failure else 'none'})"))
            continue
        for violation in plan_violations(pack.flow_domain, intent, [c.api for c in run.plan.calls]):
            out.append(Problem(file=str(pack.domain_pddl), message=f"intent {intent}: plan breaks the flow: "
                                                                  f"{violation}"))
    return out


def _plan_with_nothing_given(pack: Pack, goals: list[str]):
    """One run planning these goals together with no argument given: one planner call however many."""
    from pipeline.packs.workflows import expand_workflows
    from pipeline.run import new_run, run_stage

    run = new_run("validate", pack.name, "2024-01-01")
    facts = [IRFact(predicate="_goal", arguments=[f"g{i}", goal], constants=[True, True])
             for i, goal in enumerate(goals, 1)]
    run.checked_ir = expand_workflows(CheckedIR(facts=facts), pack)
    for stage in ("materialize", "compile", "plan"):
        run_stage(run, stage, pack)
    return run


def _optional_asked(pack: Pack, run) -> set[str]:
    """The arguments the plan asks for where its call has them as optional (each call judged by its own API:
    one goal's optional argument may be another's required one)."""
    return {value.get_info for call in run.plan.calls for argument, value in call.args.items()
            if value.get_info and argument in pack.spec.apis[call.api].optional}


def _check_goal_plans(pack: Pack) -> list[Problem]:
    """Plan every goal a request may ask for, with nothing given: each must plan, asking for exactly its
    required arguments (an optional one is never asked for). Goals are planned in batches (a planner call
    per batch, not per goal: a 500-goal pack validates in seconds, while the planner's time grows faster than
    the batch); only a batch that fails has each of its goals planned alone, to name the ones at fault."""
    goals = pack.requestable_goals()
    suspects = []
    for start in range(0, len(goals), GOAL_PLAN_BATCH):
        batch = goals[start:start + GOAL_PLAN_BATCH]
        together = _plan_with_nothing_given(pack, batch)
        if together.plan is None or _optional_asked(pack, together):
            suspects += batch
    out = []
    for goal in suspects:
        run = _plan_with_nothing_given(pack, [goal])
        where = dict(file=str(pack.yaml_path), line=pack.line_of(f"goals.{goal}"))
        if run.plan is None:
            reason = run.failure.message if run.failure else "no plan"
            out.append(Problem(**where, message=f"goal {goal}: no plan with nothing given ({reason})"))
        elif _optional_asked(pack, run):
            out.append(Problem(**where, message=f"goal {goal}: the plan asks for optional "
                                                f"{', '.join(sorted(_optional_asked(pack, run)))}"))
    return out


def _check_prompt(pack: Pack) -> list[Problem]:
    """The translation prompt template exists and renders with every variable it uses defined."""
    import jinja2

    from pipeline.llm.prompt import render_system_prompt, template_path

    path = template_path(pack)
    if not path.is_file():
        return [Problem(file=str(path), message="the pack has no translation prompt template")]
    try:
        render_system_prompt(pack)
    except jinja2.TemplateSyntaxError as exc:
        return [Problem(file=str(path), line=exc.lineno, message=f"template syntax: {exc.message}")]
    except jinja2.UndefinedError as exc:
        return [Problem(file=str(path), message=f"template variable missing: {exc.message}")]
    except jinja2.exceptions.SecurityError as exc:
        return [Problem(file=str(path), message=f"template reaches outside its values: {exc}")]
    return []


def _check_examples(pack: Pack) -> list[Problem]:
    out = []
    for file in sorted(pack.examples_dir.glob("*.lp")):
        try:
            check_ir(file.read_text(encoding="utf-8"), pack)
        except StageError as exc:
            out.append(Problem(file=str(file), message=f"example IR rejected: {exc.message}"))
    return out


def _check_runs(pack: Pack) -> list[Problem]:
    """Ground the rules once with no IR: a helper that fails or a rule that does not ground shows here."""
    try:
        materialize(CheckedIR(facts=[]), pack, "2024-01-01")
    except StageError as exc:
        return [Problem(file=str(pack.rule_files[0].parent), message=exc.message)]
    return []
