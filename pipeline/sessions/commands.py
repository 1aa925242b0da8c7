"""What a user message does to a conversation, as typed commands (Rasa CALM's commands are the model): the
LLM half of a turn (`SessionEngine.translate`) reads the message into a list of them, and the symbolic half
(`SessionEngine.advance`) applies each, in order, with its own handler. A message can do several things at
once ("yes, but make it 7 pm": a correction; "no, I meant the blue one": a switch of goal).

>>> [type(c).__name__ for c in commands_for(facts=[("g1", "time", "7 pm")], added=None, move="affirm")]
['SetValues', 'Affirm']
>>> TurnInput.model_validate_json(TurnInput(turn=1, message="cancel", commands=[Cancel()]).model_dump_json()).commands
[Cancel(command='cancel')]
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Annotated, ClassVar, Literal, Union

from pydantic import BaseModel, Field

from pipeline.llm.prompt import goal_arguments
from pipeline.packs.pack import Pack
from pipeline.packs.store import load_pack_version
from pipeline.records import Run, StageError
from pipeline.run import SYMBOLIC_STAGES, run_stage
from pipeline.sessions.delta import told_before
from pipeline.sessions.goals import add_goals, apply_delta, fresh_goal_ids, goals_from_ir
from pipeline.sessions.records import Given, Reply, SessionState
from pipeline.sessions.repair import end, handoff, summary
from pipeline.sessions.replies import say
from pipeline.stages.check import check_ir


@dataclass
class TurnContext:
    """One turn being applied: the commands change the state and say what kind of turn it was; a command
    that answers at once (cancel, a person, a message that could not be read) gives the reply itself."""
    state: SessionState
    turn: int
    kind: str = "unrelated"
    delta_ir: str = ""
    run: Run | None = None  # the planned Run, where a command made one (the opening); else the state is planned
    corrected: bool = False  # values given or goals added while a read-back waited: it is read back anew

    @cached_property
    def pack(self) -> Pack:
        """The session's pack version, loaded when a command needs it (a message that could not be read
        changes nothing and loads none)."""
        return load_pack_version(self.state.domain, self.state.pack_digest)

    def after_values(self) -> None:
        """New values or goals while a read-back waits correct it: what is read back next has them, and a yes
        or a no in the same message answers nothing."""
        if self.state.awaiting is not None and self.kind in ("switch", "jump", "added"):
            self.state.awaiting, self.corrected = None, True


class Command(BaseModel):
    """One thing a message does. `move`: the turn's kind where the command ends it at once."""
    move: ClassVar[str | None] = None
    at_once: ClassVar[bool] = False  # it answers without planning (`reply`), before any other command

    def apply(self, context: TurnContext) -> None:
        raise NotImplementedError

    def reply(self, context: TurnContext) -> Reply | None:
        return None


class StartRequest(Command):
    """The opening message: its Run, translated; its goals are the session's."""
    command: Literal["start"] = "start"
    run: Run

    def apply(self, context: TurnContext) -> None:
        run = self.run
        context.kind, context.delta_ir = "opening", run.ir or ""
        if run.ir is not None and run.status != "failed":
            try:  # the goals as asked for (a workflow goal, not its steps); the check stage reports errors
                context.state.goals = goals_from_ir(check_ir(run.ir, context.pack), context.turn, context.pack)
                run.ir = context.state.ir()  # what goals_from_ir dropped (one span given twice) is not planned
            except StageError:
                pass
        for stage in SYMBOLIC_STAGES:
            run_stage(run, stage, context.pack)
        context.run = run


class SetValues(Command):
    """Values given or corrected: (goal id, predicate, the user's words). The turn is an answer (to the
    question asked), a switch (a value changed), a jump (values not asked for) or unrelated (none applied)."""
    command: Literal["set_values"] = "set_values"
    facts: list[tuple[str, str, str]]
    delta_ir: str = Field("", description="the facts as the LLM wrote them, where all of them were kept")

    def apply(self, context: TurnContext) -> None:
        context.kind = apply_delta(context.pack, context.state, self.facts, context.turn)
        context.delta_ir = self.delta_ir
        context.after_values()


class AddGoals(Command):
    """A later message that asks for another goal: it, translated as a request; its new goals join."""
    command: Literal["add_goals"] = "add_goals"
    run: Run

    def apply(self, context: TurnContext) -> None:
        if add_goals(context.pack, context.state, self.run, context.turn, context.kind == "answer"):
            context.kind, context.delta_ir = "added", context.delta_ir + (self.run.ir or "")
        context.after_values()


class SwitchGoal(Command):
    """"No, I meant the other one": the goals the message names replace the session's; where it names none
    the session has not, its values and goals apply as they would otherwise."""
    command: Literal["switch_goal"] = "switch_goal"
    move: ClassVar[str] = "replace"
    run: Run
    facts: list[tuple[str, str, str]] = []
    delta_ir: str = ""

    def apply(self, context: TurnContext) -> None:
        if replace_goals(context.pack, context.state, self.run, context.turn):
            context.kind, context.delta_ir = "replace", self.run.ir or ""
            return
        SetValues(facts=self.facts, delta_ir=self.delta_ir).apply(context)
        AddGoals(run=self.run).apply(context)


class Choose(Command):
    """Which of the things a lookup found the message picks (its place in the list)."""
    command: Literal["choose"] = "choose"
    pick: int

    def apply(self, context: TurnContext) -> None:
        if context.state.choosing is not None:
            choose(context.state, self.pick)
            context.kind = "answer"


class Affirm(Command):
    """A yes to the read-back: its calls are confirmed."""
    command: Literal["affirm"] = "affirm"
    move: ClassVar[str] = "affirm"

    def apply(self, context: TurnContext) -> None:
        state = context.state
        if not context.corrected and state.awaiting is not None:
            state.confirmed += state.awaiting
            state.awaiting, context.kind = None, "affirm"


class Deny(Command):
    """A no to the read-back, without the right value: asked which value to change."""
    command: Literal["deny"] = "deny"
    move: ClassVar[str] = "deny"

    def apply(self, context: TurnContext) -> None:
        if not context.corrected:
            context.kind = "deny"


class DontKnow(Command):
    """"I don't know" to the question asked: a search that finds the value runs first, where the pack has one;
    else the question is explained once, then the conversation is handed off."""
    command: Literal["dont_know"] = "dont_know"
    move: ClassVar[str] = "dont_know"

    def apply(self, context: TurnContext) -> None:
        if not context.corrected:
            context.kind = "added" if search_first(context.pack, context.state, context.turn) else "dont_know"


class OffTopic(Command):
    """Nothing of the conversation was read: the question stands (bounded: `MAX_ASIDES` in a row)."""
    command: Literal["off_topic"] = "off_topic"

    def apply(self, context: TurnContext) -> None:
        context.kind = "unrelated"


class Cancel(Command):
    """The user calls it off: nothing more is carried out."""
    command: Literal["cancel"] = "cancel"
    move: ClassVar[str] = "cancel"
    at_once: ClassVar[bool] = True

    def reply(self, context: TurnContext) -> Reply:
        return end(context.state, "fail", say("cancelled", summary=summary(context.pack, context.state)),
                   say("cancelled_reason"), "cancelled")


class AskForPerson(Command):
    """The user asks for a person: handed off with what the session has."""
    command: Literal["ask_for_person"] = "ask_for_person"
    move: ClassVar[str] = "human"
    at_once: ClassVar[bool] = True

    def reply(self, context: TurnContext) -> Reply:
        return handoff(context.state, context.pack, say("asked_for_person"), "asked_for_person")


class CannotRead(Command):
    """The message could not be translated (the LLM failed): nothing changes and the question stands."""
    command: Literal["cannot_read"] = "cannot_read"
    at_once: ClassVar[bool] = True
    error: str

    def reply(self, context: TurnContext) -> Reply:
        last = context.state.turns[-1].reply
        return last.model_copy(update={"text": say("not_processed", error=self.error, question=last.text)})


AnyCommand = Annotated[Union[StartRequest, SetValues, AddGoals, SwitchGoal, Choose, Affirm, Deny, DontKnow, OffTopic,
                             Cancel, AskForPerson, CannotRead], Field(discriminator="command")]
MOVES: dict[str, type[Command]] = {c.move: c for c in (Affirm, Deny, DontKnow, Cancel, AskForPerson)}


class TurnInput(BaseModel):
    """What the LLM half of a turn made of a message: the commands the symbolic half applies to the state."""
    turn: int = Field(description="the message's place in the session (0: the opening)")
    message: str
    commands: list[AnyCommand] = Field([], description="in the order they apply")


def commands_for(facts: list[tuple[str, str, str]], added: Run | None, move: str | None,
                 delta_ir: str = "") -> list[Command]:
    """The commands of a later message: its values, the goals it adds, and its move (a yes, a no, "I don't
    know", cancel, a person; "replace": a no that names another goal)."""
    if move == "replace" and added is not None:
        return [SwitchGoal(run=added, facts=facts, delta_ir=delta_ir)]
    # facts, or the LLM's word that the message gives none ("% the message gives no value"), kept on the turn
    commands: list[Command] = [SetValues(facts=facts, delta_ir=delta_ir)] if facts or delta_ir else []
    if added is not None:
        commands.append(AddGoals(run=added))
    if move in MOVES:
        commands.append(MOVES[move]())
    return commands or [OffTopic()]


# --- the handlers' own steps -------------------------------------------------------------------------------------
def replace_goals(pack: Pack, state: SessionState, added: Run, turn: int) -> bool:
    """"No, I meant the other one": the goals the no names replace the session's, and nothing of the
    old ones runs; a value the user gave that a new goal takes is kept (the user's words, not the
    goal's). Whether anything replaced them."""
    old = state.goals
    state.goals = []
    if not add_goals(pack, state, added, turn):
        state.goals = old
        return False
    for given in state.goals:
        takes = {name.removeprefix("_") for name in goal_arguments(pack, given.goal)}
        for before in old:
            for name, words in before.values.items():
                if name in takes and name not in given.values:
                    given.values[name], given.turns[name] = words, before.turns.get(name, turn)
    state.pending = state.awaiting = None
    return True


def choose(state: SessionState, picked: int) -> None:
    """The user's pick becomes the lookup's output; an id its answer held of the first thing found is
    the picked one's, and any other field of that first thing is no longer known (`lacks`): never the
    first one's in place of the one chosen."""
    call = state.executed[state.choosing]
    first, chosen = call.output, call.candidates[picked]
    call.lacks += [name for name, value in call.fields.items() if value != first]
    call.fields = {name: chosen.id for name, value in call.fields.items() if value == first}
    call.output, call.chosen, state.choosing = chosen.id, True, None


def search_first(pack: Pack, state: SessionState, turn: int) -> bool:
    """"I don't know" to an argument a search of the pack finds (a call without effects whose output
    the argument accepts: the therapist a provider search lists, the pickup location of a car
    search): the search joins the session before the goal and gives it that argument, with the
    values the user already gave that it takes. Whether a search was added."""
    if state.pending is None:
        return False
    gid, argument = state.pending
    waiting = next((g for g in state.goals if g.goal_id == gid), None)
    spec = pack.spec.arguments.get(argument)
    if waiting is None or spec is None or argument in waiting.refs:
        return False
    searches = [name for name, goal in pack.spec.goals.items() if not goal.workflow and name != waiting.goal
                and not pack.spec.apis[goal.api].effects
                and pack.spec.apis[goal.api].produces in (spec.accepts_output or [])]
    if not searches:
        return False
    search = Given(goal_id=next(fresh_goal_ids(state)), goal=searches[0])
    takes = {name.removeprefix("_") for name in goal_arguments(pack, search.goal)}
    for name in takes:
        words = waiting.values.get(name) or told_before(pack, state, name)
        if words is not None:
            search.values[name], search.turns[name] = words, turn
    waiting.refs[argument] = search.goal_id
    state.goals.insert(state.goals.index(waiting), search)
    state.searches.append(search.goal_id)
    state.pending = None
    return True
