"""The session engine: each user message becomes a delta of the session's facts, the whole state is
planned again (materialize, compile, plan: a switch or a jump is safe because nothing is patched), and
the plan's questions are asked first, then its calls are carried out.

Post-decision controller: a call runs only when the plan reaches it with every argument bound, each
output it takes from a call that has already run; a call identical to one already carried out is not
carried out again (its output is reused); a value the pack's normaliser cannot read is asked again,
saying why. A call with effects (the pack's `effects: true`) is read back first and runs only on a yes.

Repair moves (language.moves): a yes or a no to a read-back, a correction in the no; "cancel" ends the
session with nothing more carried out; a request for a person hands the conversation off with what it has
so far; "I don't know" is explained once, then handed off. Never a loop: a question the user could not
answer is asked twice at most (the second time with what it accepts), and off-topic messages in a row and
messages in all are bounded; past a bound the conversation is handed off, with the reason.
"""

from __future__ import annotations

import re

from pipeline.language.moves import only_moves, read_moves
from pipeline.observability import metrics
from pipeline.retrieval.speech_acts import Vocabulary, requests_action
from pipeline.packs.pack import ArgumentType, Pack, load_pack
from pipeline.packs.store import load_pack_version
from pipeline.packs.versions import installed_digest
from pipeline.packs.workflows import workflow_goal_id
from pipeline.records import Run
from pipeline.run import backend_for, new_run, run_pipeline, run_stage
from pipeline.sessions.delta import (takes_any_words, clause_goals, correcting_slot, translate_delta)
from pipeline.sessions.executors import ExecutionError, Executor, executed_call, get_executor
from pipeline.sessions.commands import CannotRead, Choose, StartRequest, TurnContext, TurnInput, commands_for
from pipeline.sessions.records import Call, Reply, SessionState, Turn
from pipeline.sessions.choices import choice_question, chosen_among
from pipeline.values.lexicon import words_of
from pipeline.sessions.replies import listed, say
from pipeline.sessions.repair import MAX_ASIDES, MAX_MESSAGES, MAX_STRIKES, end, handoff, read_back, what_it_takes


# Where a description's examples start: a bracket or a colon, or an example opener's words.
_EXAMPLES_OPEN = re.compile(r"\s*(?:[(\[:]|" + "|".join(r"\b" + re.escape(w) + (r"\b" if w[-1].isalnum() else "")
                                                        for w in words_of("example_openers", "words")) + ")")


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
    about = _EXAMPLES_OPEN.split(spec.description)[0].strip(" .;,") if spec else ""
    about = "" if about.lower() == words else about
    values = listed(spec.values, "either") if spec and 1 < len(spec.values) <= 6 else ""
    detail = "; ".join(part for part in (about, values) if part)
    return say("ask_with_detail", argument=words, detail=detail) if detail else say("ask", argument=words)


class SessionEngine:
    """Runs sessions of one translator and one executor kind. A turn is two halves, so that a queue can
    run them on different workers: `translate` (the LLM: the opening's IR, or a later message's delta) and
    `advance` (symbolic: apply, plan the whole state, carry the plan out). `reply` does both."""

    def __init__(self, translator: str = "hf", executor: str = "simulated"):
        self.translator, self.executor_kind = translator, executor

    def open(self, domain: str, today: str) -> SessionState:
        load_pack(domain)  # an unknown domain fails here, before any message
        return SessionState(domain=domain, pack_digest=installed_digest(domain), today=today,
                            executor=self.executor_kind)

    def reply(self, state: SessionState, message: str) -> Reply:
        """Handle one user message: update the state in place and return the agent's reply."""
        return self.advance(state, self.translate(state, message))[0]

    def translate(self, state: SessionState, message: str) -> TurnInput:
        """The LLM half of a turn. Reads the state, never changes it."""
        turn = len(state.turns)
        if state.ended:
            return TurnInput(turn=turn, message=message)
        if not state.goals:
            run = new_run(message, state.domain, state.today, translator=self.translator,
                          pack_digest=state.pack_digest)
            return TurnInput(turn=turn, message=message, commands=[StartRequest(run=run_stage(run, "translate"))])
        pack = load_pack_version(state.domain, state.pack_digest)
        if state.choosing is not None and (pick := chosen_among(message, state.executed[state.choosing].candidates)) \
                is not None:  # which of the things found: nothing to translate
            return TurnInput(turn=turn, message=message, commands=[Choose(pick=pick)])
        moves = read_moves(message)
        if state.awaiting is not None and (moves.bare or (not moves.rest and "deny" in moves.found)):
            # a plain yes or no to a read-back: nothing to translate (a lone "nope" is no restaurant's name)
            return TurnInput(turn=turn, message=message,
                             commands=commands_for([], None, self._move(state, moves.found, False)))
        # After a yes or a no to a read-back, the rest of the message is what may correct a value; free
        # words there are read as the read-back's closest free value, as if it had been asked.
        read, view = message, state
        denies = "deny" in moves.found and "cancel" not in moves.found  # "no thanks, never mind" corrects nothing
        if state.awaiting is not None and moves.rest:
            read = moves.rest
            if denies:
                view = state.model_copy(update={"pending": correcting_slot(pack, state, read)})
        try:
            delta = translate_delta(pack, view, read, backend_for(self.translator))
            have = {g.goal for g in state.goals}
            named = clause_goals(pack, message)  # retrieval once per message
            added = None
            # It asks for more, or a no names another goal: translated as a request of its own.
            replacing = denies and any(goal not in have for goal, _ in named)
            if replacing or any(acts and goal not in have for goal, acts in named):
                added = run_stage(new_run(moves.rest if replacing and moves.rest else message, state.domain,
                                          state.today, translator=self.translator,
                                          pack_digest=state.pack_digest), "translate")
            # A message that asks for a goal the session has ("and get me someone about it", where a call
            # with a person is the pack's service) is that goal, no request to leave the conversation.
            goal_named = added is not None or any(acts for _, acts in named)
        except Exception as exc:  # noqa: BLE001 - the LLM failed on this message: the session goes on
            return TurnInput(turn=turn, message=message, commands=[CannotRead(error=f"{type(exc).__name__}: {exc}")])
        found = moves.found if requests_action(message, Vocabulary.of(pack)) else moves.found - {"human"}
        # Free words read unasked ("forget" of "forget it" as a name) do not hide a move; the move drops them.
        facts = delta.facts
        leaving = found & {"cancel", "human", "dont_know"}
        kept = [f for f in facts if (f[0], f[1]) == state.pending and not only_moves(str(f[2]), leaving)
                or not takes_any_words(pack, f[1])]
        move = "replace" if replacing and added.ir else self._move(state, found, bool(kept) or goal_named)
        if move in ("cancel", "human", "dont_know"):
            facts = kept
        return TurnInput(turn=turn, message=message,
                         commands=commands_for(facts, added, move, delta.raw if facts == delta.facts else ""))

    @staticmethod
    def _move(state: SessionState, found: frozenset[str], gives: bool) -> str | None:
        """The move that counts: cancel, a person or "I don't know" only when the message gives no value
        and asks for no goal (a pack may serve a call with a person, or cancelling a booking), and a person
        only when asked for (not "am I talking to a person?"); a yes or a no only to a read-back."""
        if not gives:
            for move in ("cancel", "human", "dont_know"):
                if move in found:
                    return move
        if state.awaiting is not None:
            for move in ("affirm", "deny"):
                if move in found:
                    return move
        return None

    def advance(self, state: SessionState, turn_input: TurnInput) -> tuple[Reply, Run | None]:
        """The symbolic half: apply the turn's commands to the state, plan it again and carry the plan out
        up to its next question or its end. The turn is appended to the state; returns the reply and the
        Run that planned it."""
        if turn_input.turn != len(state.turns):
            raise ValueError(f"turn {turn_input.turn} given to a session at turn {len(state.turns)}")
        if state.ended:  # a message after the end (sent before the end was known) gets the end again
            reply = Reply(kind=state.ended, text=say("ended"), executed=state.calls())
            state.turns.append(Turn(message=turn_input.message, kind="unrelated", reply=reply))
            return reply, None
        context = TurnContext(state=state, turn=turn_input.turn)
        ended = self._answered_at_once(context, turn_input.commands)
        if ended is not None:
            state.turns.append(Turn(message=turn_input.message, kind=ended[0], reply=ended[1]))
            return ended[1], None
        for command in turn_input.commands:
            command.apply(context)
        pack, turn, kind, delta_ir = context.pack, context.turn, context.kind, context.delta_ir
        run = context.run or run_pipeline(state.turns[0].message, state.domain, state.today, ir=state.ir(),
                                          pack_digest=state.pack_digest)
        if run.materialized is not None:
            by_id = {g.goal_id: g for g in state.goals}
            for given in state.goals:
                given.normalized = {}
            for goal in run.materialized.goals:
                given = by_id.get(workflow_goal_id(goal.goal_id, by_id.keys()))
                if given is not None:
                    given.normalized.update({a: b.value for a, b in goal.args.items() if b.kind == "value"})
        reply = self._bounded(state, pack, self._carry_out(state, pack, run, kind, turn), kind)
        state.turns.append(Turn(message=turn_input.message, delta_ir=delta_ir, kind=kind, reply=reply, run_id=run.id))
        return reply, run

    # --- repair moves and bounds ------------------------------------------------------------------
    def _answered_at_once(self, context: TurnContext, commands: list) -> tuple[str, Reply] | None:
        """(the turn's kind, the reply) where the message is answered before anything is planned: a message
        that could not be read, cancel, a person, too many messages."""
        if any(isinstance(c, StartRequest) for c in commands):
            return None
        for command in commands:
            if command.at_once:
                return command.move or "unrelated", command.reply(context)
        if len(context.state.turns) + 1 >= MAX_MESSAGES:
            moved = next((c.move for c in commands if c.move), None)
            return moved or "unrelated", handoff(context.state, context.pack,
                                                      say("message_limit", count=MAX_MESSAGES), "message_limit")
        return None

    def _bounded(self, state: SessionState, pack: Pack, reply: Reply, kind: str) -> Reply:
        """Count the answers that left the question standing; the second time a question is asked again it
        says what it accepts (or, after "I don't know", why it is needed); past the bound, a handoff."""
        if reply.kind not in ("ask", "confirm"):
            state.strikes = 0
            return reply
        if reply.kind == "confirm":  # a read-back turned down, then offered unchanged after other questions
            offered = sum(1 for t in state.turns if t.reply is not None and t.reply.kind == "confirm"
                          and t.reply.calls == reply.calls)
            if offered >= MAX_STRIKES:
                return handoff(state, pack, say("read_back_refused", count=offered),
                                     "read_back_refused")
        last = state.turns[-1].reply if state.turns else None
        same = last is not None and last.kind == reply.kind and last.slot == reply.slot and last.calls == reply.calls
        if not same:
            state.strikes = 0
            return reply
        asides = 0
        for earlier in reversed(state.turns):
            if earlier.kind != "unrelated":
                break
            asides += 1
        if kind == "unrelated":  # an aside, or an answer nothing could be read from
            if asides + 1 >= MAX_ASIDES:
                return handoff(state, pack, say("off_topic_limit", count=MAX_ASIDES),
                                     "off_topic")
            return self._with_form(pack, reply) if asides == 0 and reply.kind == "ask" else reply
        if kind not in ("answer", "dont_know", "deny"):  # other values given (a jump): progress, no strike
            return reply
        state.strikes += 1
        if state.strikes >= MAX_STRIKES:
            asked = reply.slot.replace("_", " ") if reply.slot else say("unanswered_read_back")
            return handoff(state, pack, say("unanswered", asked=asked), "unanswered")
        if kind == "dont_know" and reply.kind == "ask":
            goal = next((g.goal for g in state.goals if state.pending and g.goal_id == state.pending[0]), None)
            why = pack.spec.goals[goal].description.rstrip(".") if goal in pack.spec.goals else say("why_default")
            return reply.model_copy(update={"text": say("needed_for", argument=reply.slot.replace("_", " "), why=why,
                                                        question=reply.text)})
        if reply.kind == "ask":
            return self._with_form(pack, reply)
        return reply.model_copy(update={"text": say("which_to_change", question=reply.text)})

    @staticmethod
    def _with_form(pack: Pack, reply: Reply) -> Reply:
        form = what_it_takes(pack.spec.arguments.get(reply.slot or ""))
        return reply.model_copy(update={"text": f"{reply.text} {form}".strip()})

    # --- carrying the plan out --------------------------------------------------------------------
    def _carry_out(self, state: SessionState, pack: Pack, run: Run, kind: str, turn: int) -> Reply:
        if run.failure is not None or run.plan is None:
            message = run.failure.message if run.failure else say("no_plan")
            return end(state, "fail", message, message, "run_failed")
        try:
            executor = get_executor(state.executor, pack, session_id=state.id, recorded=state.recorded)
            return self._walk(state, pack, run, kind, executor, turn)
        except ExecutionError as exc:
            failed = say("call_failed", error=exc)
            return end(state, "fail", failed, failed, "call_failed")

    def _walk(self, state: SessionState, pack: Pack, run: Run, kind: str, executor: Executor, turn: int) -> Reply:
        self._run_searches(state, run, executor, turn)
        # Every question before any call: a value the user changes later ("make it Q2 instead") then
        # changes what runs, instead of leaving a call made with the old value behind.
        for call in run.plan.calls:
            missing = [argument for argument, bound in call.args.items() if bound.get_info]
            if missing:
                return self._ask(state, pack, run, call.goal_id, missing[0], kind)
        to_run, position = self._still_to_run(state, run)
        # A call without effects whose answer a call with effects takes, itself or through others (the salon
        # a search found, the pet a list picked), runs before the read-back: the user confirms what was
        # found, not a search, and nothing with effects runs on an id nobody has seen.
        while (shown := next((c for c in to_run if self._feeds_a_change(pack, c, to_run, len(state.executed))),
                             None)) is not None:
            found = self._run_once(state, shown.api, shown.args, executor, turn)
            if state.executed[found].candidates and not state.executed[found].chosen:
                return self._offer(state, pack, found, to_run)  # several found: the user says which
            to_run, position = self._still_to_run(state, run)
        # Anything with effects is read back before the other calls run, the lookups it depends on
        # included: a value read wrong is corrected before any call is made with it.
        unconfirmed = [c for c in to_run if pack.spec.apis[c.api].effects and c not in state.confirmed]
        if unconfirmed:
            state.pending, state.awaiting = None, to_run
            return Reply(kind="confirm", text=read_back(pack, to_run, state), calls=to_run, executed=state.calls())
        for call in to_run:
            self._run_once(state, call.api, call.args, executor, turn)
        result = [Call(api=call.api, args={a: b.value if b.value is not None else {"ref": b.ref}
                                           for a, b in call.args.items()}) for call in run.plan.calls]
        state.pending, state.ended, state.end_reason = None, "done", say("carried_out")
        metrics.session_ended("done", "carried_out")
        outputs = ", ".join(say("output", api=state.executed[j].api, output=state.executed[j].output)
                            for j in position.values())
        return Reply(kind="done", text=say("done", outputs=outputs), executed=state.calls(), result=result)

    def _run_searches(self, state: SessionState, run: Run, executor: Executor, turn: int) -> None:
        """A search added because the user did not know a value (`commands.search_first`) runs once it has its
        values, before the questions of the goal it serves: what it finds is what the user chooses from,
        and a search changes nothing if a value changes later."""
        for i, call in enumerate(run.plan.calls):
            before = run.plan.calls[:i + 1]  # the search and what it takes outputs of, all known
            if call.goal_id not in state.searches or any(b.get_info for c in before for b in c.args.values()):
                continue
            to_run, position = self._still_to_run(state, run.model_copy(
                update={"plan": run.plan.model_copy(update={"calls": before})}))
            waiting = position[i] - len(state.executed)
            if waiting >= 0 and not any(isinstance(v, dict) and v["ref"] >= len(state.executed)
                                        for v in to_run[waiting].args.values()):
                self._run_once(state, to_run[waiting].api, to_run[waiting].args, executor, turn)

    @staticmethod
    def _offer(state: SessionState, pack: Pack, found: int, to_run: list[Call]) -> Reply:
        """A lookup found several things a call with effects is to act on: they are shown, numbered, and the
        user is asked which one (nothing runs on the first of them unasked)."""
        call = state.executed[found]
        fed = next((name for later in to_run for name, value in later.args.items() if value == {"ref": found}), None)
        rest = pack.spec.apis[call.api].rest
        resource = rest.resource.replace("_", " ") if rest is not None and rest.resource else "thing"
        state.choosing, state.pending = found, None
        return Reply(kind="ask", slot=fed, text=choice_question(resource, call.candidates), executed=state.calls())

    @staticmethod
    def _still_to_run(state: SessionState, run: Run) -> tuple[list[Call], dict[int, int]]:
        """The plan's calls not carried out yet, each ref a place in `executed` followed by these calls
        (where each will be once carried out, in this order), and each plan call's place."""
        position: dict[int, int] = {}
        to_run: list[Call] = []
        for i, call in enumerate(run.plan.calls):
            args = {argument: bound.value if bound.value is not None else {"ref": position[bound.ref]}
                    for argument, bound in call.args.items()}
            done = next((j for j, c in enumerate(state.executed) if c.api == call.api and c.args == args), None)
            if done is None:
                done = len(state.executed) + len(to_run)
                to_run.append(Call(api=call.api, args=args))
            position[i] = done
        return to_run, position

    @staticmethod
    def _feeds_a_change(pack: Pack, call: Call, to_run: list[Call], executed: int) -> bool:
        """Whether a call without effects, taking only outputs already there, gives a later call with
        effects a field of its answer (a found record), or is a REST read (a search, a list, a read of one
        thing: `rest`) whose answer a later call with effects takes, itself or through other such reads:
        the thing the change acts on was looked up, and the user is to see which. Other reads wait for the
        yes: a read the user asked for runs with the values the read-back may still correct."""
        api = pack.spec.apis[call.api]
        if api.effects or any(isinstance(v, dict) and v["ref"] >= executed for v in call.args.values()):
            return False
        place = executed + to_run.index(call)
        if any(pack.spec.apis[later.api].effects and name in api.returns and value == {"ref": place}
               for later in to_run for name, value in later.args.items()):
            return True
        if api.rest is None:
            return False
        needed = {executed + i for i, later in enumerate(to_run) if pack.spec.apis[later.api].effects}
        for i in range(len(to_run) - 1, -1, -1):  # what the changes take, then what those take, back to front
            later = pack.spec.apis[to_run[i].api]
            if executed + i in needed and (later.effects or later.rest is not None):
                needed |= {v["ref"] for v in to_run[i].args.values() if isinstance(v, dict)}
        return place in needed

    def _run_once(self, state: SessionState, api: str, args: dict, executor: Executor, turn: int) -> int:
        """Carry out a call (its refs must point at calls already carried out), or reuse the identical one."""
        for j, done in enumerate(state.executed):
            if done.api == api and done.args == args:
                return j
        missing = [before for before in load_pack_version(state.domain, state.pack_digest).spec.apis[api].after
                   if not any(done.api == before for done in state.executed)]
        if missing:  # the controller's check against the pack's dependency graph
            raise ExecutionError(f"{api} may not run before {', '.join(missing)}")
        values = {}
        for argument, value in args.items():
            if isinstance(value, dict):
                if not 0 <= value["ref"] < len(state.executed):  # the controller's dependency check
                    raise ExecutionError(f"{api} takes {argument} from a call that has not run")
                source = state.executed[value["ref"]]
                if argument in source.lacks:  # never the source's own output in its place: another thing's id
                    raise ExecutionError(f"{source.api} found no {argument} for {api}")
                value = source.value_for(argument)
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
            question = say("unreadable", words=", ".join(repr(w) for w in unreadable), question=question)
        elif kind == "unrelated":
            question = say("off_topic", question=question)
        return Reply(kind="ask", slot=argument, text=question, executed=state.calls())
