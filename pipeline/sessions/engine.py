"""The session engine: each user message becomes a delta of the session's facts, the whole state is
planned again (materialize, compile, plan: a switch or a jump is safe because nothing is patched), and
the plan is carried out up to its next question to the user or its end.

Post-decision controller: a call runs only when the plan reaches it with every argument bound, each
output it takes from a call that has already run; a call identical to one already carried out is not
carried out again (its output is reused); a value the pack's normaliser cannot read is asked again,
saying why.
"""

from __future__ import annotations

from pipeline.packs.pack import Pack, load_pack
from pipeline.packs.workflows import workflow_goal_id
from pipeline.records import CheckedIR, Run
from pipeline.run import backend_for, run_pipeline
from pipeline.stages.check import check_ir
from pipeline.sessions.delta import translate_delta
from pipeline.sessions.executors import ExecutionError, Executor, get_executor
from pipeline.sessions.records import Call, ExecutedCall, Given, Reply, SessionState, Turn


def goals_from_ir(checked: CheckedIR, turn: int) -> list[Given]:
    """The session's goals from an opening's IR; words given for two arguments of one goal ("Bella Notte"
    as the restaurant and the contact name) stay with the first: one span is one value."""
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
    return list(goals.values())


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
    return "answer" if answered else "switch" if changed else "jump" if given_new else "unrelated"


class SessionEngine:
    """Runs sessions of one translator and one executor kind."""

    def __init__(self, translator: str = "hf", executor: str = "simulated"):
        self.translator, self.executor_kind = translator, executor

    def open(self, domain: str, today: str) -> SessionState:
        load_pack(domain)  # an unknown domain fails here, before any message
        return SessionState(domain=domain, today=today)

    def reply(self, state: SessionState, message: str) -> Reply:
        """Handle one user message: update the state in place and return the agent's reply."""
        if state.ended:
            return state.turns[-1].reply
        pack = load_pack(state.domain)
        turn = len(state.turns)
        if not state.goals:
            run = run_pipeline(message, state.domain, state.today, translator=self.translator)
            if run.checked_ir is not None:  # the goals as asked for (a workflow goal, not its steps)
                state.goals = goals_from_ir(check_ir(run.ir, pack), turn)
            kind, delta_ir = "opening", run.ir or ""
        else:
            delta = translate_delta(pack, state, message, backend_for(self.translator))
            kind = apply_delta(pack, state, delta.facts, turn)
            delta_ir = delta.raw
            run = run_pipeline(state.turns[0].message, state.domain, state.today, ir=state.ir())
        if run.materialized is not None:
            by_id = {g.goal_id: g for g in state.goals}
            for given in state.goals:
                given.normalized = {}
            for goal in run.materialized.goals:
                given = by_id.get(workflow_goal_id(goal.goal_id, by_id.keys()))
                if given is not None:
                    given.normalized.update({a: b.value for a, b in goal.args.items() if b.kind == "value"})
        reply = self._carry_out(state, pack, run, kind, get_executor(self.executor_kind, pack), turn)
        state.turns.append(Turn(message=message, delta_ir=delta_ir, kind=kind, reply=reply, run_id=run.id))
        return reply

    # --- carrying the plan out --------------------------------------------------------------------
    def _carry_out(self, state: SessionState, pack: Pack, run: Run, kind: str, executor: Executor,
                   turn: int) -> Reply:
        if run.failure is not None or run.plan is None:
            state.ended = "fail"
            message = run.failure.message if run.failure else "no plan"
            return Reply(kind="fail", text=message, executed=self._executed(state))
        try:
            return self._walk(state, pack, run, kind, executor, turn)
        except ExecutionError as exc:
            state.ended = "fail"
            return Reply(kind="fail", text=f"an API call failed: {exc}", executed=self._executed(state))

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
        return Reply(kind="done", text=f"Done: {outputs}.", executed=self._executed(state), result=result)

    def _run_once(self, state: SessionState, api: str, args: dict, executor: Executor, turn: int) -> int:
        """Carry out a call (its refs must point at calls already carried out), or reuse the identical one."""
        for j, done in enumerate(state.executed):
            if done.api == api and done.args == args:
                return j
        values = {}
        for argument, value in args.items():
            if isinstance(value, dict):
                if not 0 <= value["ref"] < len(state.executed):  # the controller's dependency check
                    raise ExecutionError(f"{api} takes {argument} from a call that has not run")
                value = state.executed[value["ref"]].output
            values[argument] = value
        output = executor.call(api, values)
        state.executed.append(ExecutedCall(api=api, args=args, output=output, turn=turn))
        return len(state.executed) - 1

    def _ask(self, state: SessionState, pack: Pack, run: Run, goal_id: str | None, argument: str,
             kind: str) -> Reply:
        state.pending = (workflow_goal_id(goal_id or "g1", {g.goal_id for g in state.goals}), argument)
        state.asked.append(argument)
        spec = pack.spec.arguments.get(argument)
        question = f"Please tell me the {argument.replace('_', ' ')}" + (f" ({spec.description})" if spec else "") + "."
        unreadable = run.materialized.unreadable if run.materialized else []
        if unreadable:
            question = f"I could not read {', '.join(repr(w) for w in unreadable)}. " + question
        elif kind == "unrelated":
            question = "I can only help with this request here. " + question
        return Reply(kind="ask", slot=argument, text=question, executed=self._executed(state))

    @staticmethod
    def _executed(state: SessionState) -> list[Call]:
        return [Call(api=c.api, args=c.args) for c in state.executed]
