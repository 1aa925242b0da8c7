"""The session engine: each user message becomes a delta of the session's facts, the whole state is
planned again (materialize, compile, plan: a switch or a jump is safe because nothing is patched), and
the plan is carried out up to its next question to the user or its end.

Post-decision controller: a call runs only when the plan reaches it with every argument bound, each
output it takes from a call that has already run; a call identical to one already carried out is not
carried out again (its output is reused); a value the pack's normaliser cannot read is asked again,
saying why.
"""

from __future__ import annotations

import itertools
import re

from pipeline.packs.pack import ArgumentType, Pack, load_pack
from pipeline.packs.workflows import workflow_goal_id
from pipeline.records import CheckedIR, Run, StageError
from pipeline.run import SYMBOLIC_STAGES, backend_for, new_run, run_pipeline, run_stage
from pipeline.stages.check import check_ir
from pipeline.sessions.delta import FREE_FAMILIES, _family, asked_goals, translate_delta
from pipeline.sessions.executors import ExecutionError, Executor, executed_call, get_executor
from pipeline.sessions.records import Call, Given, Reply, SessionState, Turn, TurnInput


def question_for(argument: str, spec: ArgumentType | None) -> str:
    """What the agent asks for a missing value: the pack's `question:`, else a sentence from the argument's
    name and description, without the description's own brackets or lists (they read as a raw dump), and
    with a closed list's values spelt out.

    >>> question_for("source", ArgumentType(normalizer="choice", values=["card", "bank"],
    ...                                     description="where the money comes from (app balance, ...)"))
    'Please tell me the source (where the money comes from; card or bank).'
    """
    if spec is not None and spec.question:
        return spec.question
    words = argument.replace("_", " ")
    about = re.split(r"\s*(?:[(\[:]|\be\.g\.|\bsuch as\b)", spec.description)[0].strip(" .;,") if spec else ""
    about = "" if about.lower() == words else about
    values = f"{', '.join(spec.values[:-1])} or {spec.values[-1]}" if spec and 1 < len(spec.values) <= 6 else ""
    detail = "; ".join(part for part in (about, values) if part)
    return f"Please tell me the {words}" + (f" ({detail})" if detail else "") + "."


def goals_from_ir(checked: CheckedIR, turn: int, pack: Pack) -> list[Given]:
    """The session's goals from an opening's IR. One span is one value: words given for two arguments of
    one goal ("Bella Notte" as the restaurant and the contact name) stay with the first, and a name or
    free text inside another free value of the goal ("Petit Jardin" of "Le Petit Jardin") is no value; a
    name inside an email or phone is still a name."""
    goals: dict[str, Given] = {}
    for fact in checked.facts:
        if fact.predicate == "_goal":
            goals[str(fact.arguments[0])] = Given(goal_id=str(fact.arguments[0]), goal=str(fact.arguments[1]))
    for fact in checked.facts:
        gid, predicate = str(fact.arguments[0]), fact.predicate.removeprefix("_")
        if fact.predicate == "_goal" or gid not in goals:
            continue
        if fact.constants[1]:
            goals[gid].refs[predicate] = str(fact.arguments[1])
        elif str(fact.arguments[1]) not in goals[gid].values.values():
            goals[gid].values[predicate] = str(fact.arguments[1])
            goals[gid].turns[predicate] = turn
    for given in goals.values():
        for predicate, words in list(given.values.items()):
            if _family(pack, predicate) in FREE_FAMILIES and any(
                    _inside(words, other) for name, other in given.values.items()
                    if name != predicate and _family(pack, name) in FREE_FAMILIES):
                del given.values[predicate], given.turns[predicate]
    return list(goals.values())


def add_goals(pack: Pack, state: SessionState, run: Run, turn: int) -> bool:
    """Add the goals a later message's own translation asks for that the session lacks, under new ids; a
    reference to a goal the session has by that name points at the session's ("and call me about that
    report"). Whether any was added."""
    if run.ir is None or run.status == "failed":
        return False
    try:
        found = goals_from_ir(check_ir(run.ir, pack), turn, pack)
    except StageError:
        return False
    have = {g.goal: g.goal_id for g in state.goals}
    ids = {g.goal_id: have.get(g.goal) for g in found}
    added = [g for g in found if g.goal not in have]
    taken = {g.goal_id for g in state.goals}
    fresh = (f"g{n}" for n in itertools.count(1) if f"g{n}" not in taken)
    for given in added:
        ids[given.goal_id] = given.goal_id = next(fresh)
    for given in added:
        given.refs = {name: ids[ref] for name, ref in given.refs.items() if ids.get(ref)}
    state.goals.extend(added)
    return bool(added)


def _inside(words: str, other: str) -> bool:
    return len(words) < len(other) and re.search(rf"(?<!\w){re.escape(words.lower())}(?!\w)", other.lower()) is not None


def apply_delta(pack: Pack, state: SessionState, facts: list[tuple[str, str, str]], turn: int) -> str:
    """Write the delta into the state; what kind of turn it was: answer, jump, switch or unrelated."""
    by_id = {g.goal_id: g for g in state.goals}
    answered = changed = given_new = False
    for gid, predicate, words in facts:
        given = by_id.get(gid)
        if given is None:
            continue
        gives = set(pack.spec.ir_extra[predicate].gives) if predicate in pack.spec.ir_extra else {predicate}
        if state.pending and state.pending[0] == gid and state.pending[1] in gives:
            answered = True
        # An argument given again, or given together by a period-like fact, replaces what it covers.
        covering = [name for name in given.values if name in pack.spec.ir_extra
                    and set(pack.spec.ir_extra[name].gives) & gives]
        replaced = [name for name in [*gives, *covering, predicate] if name in given.values]
        if any(given.values[name] != words for name in replaced):
            changed = True
        elif not replaced:
            given_new = True
        for name in replaced:
            given.values.pop(name, None)
            if name in pack.spec.ir_extra:  # what the dropped fact gave besides this keeps its value
                for part in set(pack.spec.ir_extra[name].gives) - gives:
                    if part in given.normalized and part not in given.values:
                        given.values[part] = given.normalized[part]
        given.values[predicate] = words
        given.turns[predicate] = turn
        if _family(pack, predicate) in FREE_FAMILIES:  # one span is one value, across turns too: an
            for name in [n for n, other in given.values.items()  # earlier reading of these words goes
                         if n != predicate and given.turns.get(n, turn) < turn and _family(pack, n) in FREE_FAMILIES
                         and (other.lower() == words.lower() or _inside(other, words))]:
                del given.values[name], given.turns[name]
    return "answer" if answered else "switch" if changed else "jump" if given_new else "unrelated"


class SessionEngine:
    """Runs sessions of one translator and one executor kind. A turn is two halves, so that a queue can
    run them on different workers: `translate` (the LLM: the opening's IR, or a later message's delta) and
    `advance` (symbolic: apply, plan the whole state, carry the plan out). `reply` does both."""

    def __init__(self, translator: str = "hf", executor: str = "simulated"):
        self.translator, self.executor_kind = translator, executor

    def open(self, domain: str, today: str) -> SessionState:
        load_pack(domain)  # an unknown domain fails here, before any message
        return SessionState(domain=domain, today=today, executor=self.executor_kind)

    def reply(self, state: SessionState, message: str) -> Reply:
        """Handle one user message: update the state in place and return the agent's reply."""
        return self.advance(state, self.translate(state, message))[0]

    def translate(self, state: SessionState, message: str) -> TurnInput:
        """The LLM half of a turn. Reads the state, never changes it."""
        turn = len(state.turns)
        if state.ended:
            return TurnInput(turn=turn, message=message)
        if not state.goals:
            run = new_run(message, state.domain, state.today, translator=self.translator)
            return TurnInput(turn=turn, message=message, opening=run_stage(run, "translate"))
        pack = load_pack(state.domain)
        try:
            delta = translate_delta(pack, state, message, backend_for(self.translator))
            added = None
            if asked_goals(pack, state, message):  # it asks for more: translated as a request of its own
                added = run_stage(new_run(message, state.domain, state.today, translator=self.translator), "translate")
        except Exception as exc:  # noqa: BLE001 - the LLM failed on this message: the session goes on
            return TurnInput(turn=turn, message=message, error=f"{type(exc).__name__}: {exc}")
        return TurnInput(turn=turn, message=message, facts=delta.facts, delta_ir=delta.raw, added=added)

    def advance(self, state: SessionState, turn_input: TurnInput) -> tuple[Reply, Run | None]:
        """The symbolic half: write the turn's facts into the state, plan it again and carry the plan out
        up to its next question or its end. The turn is appended to the state; returns the reply and the
        Run that planned it."""
        if turn_input.turn != len(state.turns):
            raise ValueError(f"turn {turn_input.turn} given to a session at turn {len(state.turns)}")
        if state.ended:  # a message after the end (sent before the end was known) gets the end again
            reply = Reply(kind=state.ended, text="This conversation has ended.", executed=state.calls())
            state.turns.append(Turn(message=turn_input.message, kind="unrelated", reply=reply))
            return reply, None
        if turn_input.error is not None:  # nothing changes; the question stands
            last = state.turns[-1].reply
            reply = last.model_copy(update={"text": f"Sorry, I could not process that message "
                                                    f"({turn_input.error}). {last.text}"})
            state.turns.append(Turn(message=turn_input.message, kind="unrelated", reply=reply))
            return reply, None
        pack = load_pack(state.domain)
        turn = turn_input.turn
        if turn_input.opening is not None:
            run = turn_input.opening
            kind, delta_ir = "opening", run.ir or ""
            if run.ir is not None and run.status != "failed":
                try:  # the goals as asked for (a workflow goal, not its steps); the check stage reports errors
                    state.goals = goals_from_ir(check_ir(run.ir, pack), turn, pack)
                    run.ir = state.ir()  # what goals_from_ir dropped (one span given twice) is not planned
                except StageError:
                    pass
            for stage in SYMBOLIC_STAGES:
                run_stage(run, stage, pack)
        else:
            kind = apply_delta(pack, state, turn_input.facts, turn)
            delta_ir = turn_input.delta_ir
            if turn_input.added is not None and add_goals(pack, state, turn_input.added, turn):
                kind, delta_ir = "added", delta_ir + (turn_input.added.ir or "")
            run = run_pipeline(state.turns[0].message, state.domain, state.today, ir=state.ir())
        if run.materialized is not None:
            by_id = {g.goal_id: g for g in state.goals}
            for given in state.goals:
                given.normalized = {}
            for goal in run.materialized.goals:
                given = by_id.get(workflow_goal_id(goal.goal_id, by_id.keys()))
                if given is not None:
                    given.normalized.update({a: b.value for a, b in goal.args.items() if b.kind == "value"})
        reply = self._carry_out(state, pack, run, kind, turn)
        state.turns.append(Turn(message=turn_input.message, delta_ir=delta_ir, kind=kind, reply=reply, run_id=run.id))
        return reply, run

    # --- carrying the plan out --------------------------------------------------------------------
    def _carry_out(self, state: SessionState, pack: Pack, run: Run, kind: str, turn: int) -> Reply:
        if run.failure is not None or run.plan is None:
            state.ended = "fail"
            message = run.failure.message if run.failure else "no plan"
            return Reply(kind="fail", text=message, executed=state.calls())
        try:
            executor = get_executor(state.executor, pack, session_id=state.id, recorded=state.recorded)
            return self._walk(state, pack, run, kind, executor, turn)
        except ExecutionError as exc:
            state.ended = "fail"
            return Reply(kind="fail", text=f"an API call failed: {exc}", executed=state.calls())

    def _walk(self, state: SessionState, pack: Pack, run: Run, kind: str, executor: Executor, turn: int) -> Reply:
        executed_at: dict[int, int] = {}  # plan call -> index in state.executed
        result: list[Call] = []
        for i, call in enumerate(run.plan.calls):
            missing = [argument for argument, bound in call.args.items() if bound.get_info]
            if missing:
                return self._ask(state, pack, run, call.goal_id, missing[0], kind)
            args = {argument: bound.value if bound.value is not None else {"ref": executed_at[bound.ref]}
                    for argument, bound in call.args.items()}
            executed_at[i] = self._run_once(state, call.api, args, executor, turn)
            result.append(Call(api=call.api, args={a: b.value if b.value is not None else {"ref": b.ref}
                                                   for a, b in call.args.items()}))
        state.pending, state.ended = None, "done"
        outputs = ", ".join(f"{state.executed[j].api} -> {state.executed[j].output}" for j in executed_at.values())
        return Reply(kind="done", text=f"Done: {outputs}.", executed=state.calls(), result=result)

    def _run_once(self, state: SessionState, api: str, args: dict, executor: Executor, turn: int) -> int:
        """Carry out a call (its refs must point at calls already carried out), or reuse the identical one."""
        for j, done in enumerate(state.executed):
            if done.api == api and done.args == args:
                return j
        missing = [before for before in load_pack(state.domain).spec.apis[api].after
                   if not any(done.api == before for done in state.executed)]
        if missing:  # the controller's check against the pack's dependency graph
            raise ExecutionError(f"{api} may not run before {', '.join(missing)}")
        values = {}
        for argument, value in args.items():
            if isinstance(value, dict):
                if not 0 <= value["ref"] < len(state.executed):  # the controller's dependency check
                    raise ExecutionError(f"{api} takes {argument} from a call that has not run")
                value = state.executed[value["ref"]].value_for(argument)
            values[argument] = value
        state.executed.append(executed_call(api, args, executor.call(api, values), turn))
        return len(state.executed) - 1

    def _ask(self, state: SessionState, pack: Pack, run: Run, goal_id: str | None, argument: str,
             kind: str) -> Reply:
        state.pending = (workflow_goal_id(goal_id or "g1", {g.goal_id for g in state.goals}), argument)
        state.asked.append(argument)
        spec = pack.spec.arguments.get(argument)
        question = question_for(argument, spec)
        unreadable = run.materialized.unreadable if run.materialized else []
        if unreadable:
            question = f"I could not read {', '.join(repr(w) for w in unreadable)}. " + question
        elif kind == "unrelated":
            question = "I can only help with this request here. " + question
        return Reply(kind="ask", slot=argument, text=question, executed=state.calls())
