"""A session's state and the reply protocol of the sessions benchmark (`kind` ask/confirm/done/fail/handoff,
`slot`, `text`, `calls`, `executed`, `result`)."""

from __future__ import annotations

import uuid
from typing import Literal

from pydantic import BaseModel, Field

from pipeline.records import IRFact

# A call's argument: a value (normalised), or {"ref": i}, the output of executed[i] (or result[i]).
ArgValue = str | dict[str, int]


class Call(BaseModel):
    api: str
    args: dict[str, ArgValue]


class Candidate(BaseModel):
    """One of several things a list or a search found: its identifier and what it is called."""
    id: str
    label: str = ""


class ExecutedCall(Call):
    output: str = Field(description="what the API returned (an id, a report, a booking number)")
    fields: dict[str, str] = Field({}, description="an answer with fields (a search result): each field; a "
                                                   "later argument of the same name takes that field")
    lacks: list[str] = Field([], description="arguments its answer was to give an identifier to and did not "
                                             "(an empty list inside it): a later call taking one cannot run")
    turn: int = Field(description="the user message after which it ran (0: the opening)")
    candidates: list[Candidate] = Field([], description="the things its answer found, where several: the "
                                                        "user chooses which one its output is")
    chosen: bool = Field(False, description="the user chose its output among its candidates")

    def value_for(self, argument: str) -> str:
        """What a later argument taking this call's output receives: the answer's field of its name when
        the answer is a record, else the whole output."""
        return self.fields.get(argument, self.output)


class Reply(BaseModel):
    kind: Literal["ask", "confirm", "done", "fail", "handoff"]
    slot: str | None = None
    text: str
    calls: list[Call] | None = Field(None, description="confirm: the calls about to run (some with effects), "
                                                       "in `executed`'s format, a ref a place in `executed` "
                                                       "followed by these calls; none runs before a yes")
    executed: list[Call] = []
    result: list[Call] | None = None


class Given(BaseModel):
    """One goal of the session with the arguments given so far; each value with the turn it came from."""
    goal_id: str
    goal: str
    values: dict[str, str] = Field({}, description="IR predicate (without `_`) -> the user's words")
    refs: dict[str, str] = Field({}, description="argument -> the goal id whose output it takes")
    turns: dict[str, int] = Field({}, description="IR predicate -> the turn that gave its value")
    normalized: dict[str, str] = Field({}, description="argument -> its value as the last plan read it")


class Turn(BaseModel):
    message: str
    delta_ir: str = Field("", description="the facts this message gave or changed")
    kind: Literal["opening", "answer", "jump", "switch", "added", "unrelated",
                  "affirm", "deny", "cancel", "human", "dont_know", "replace"] = "answer"
    reply: Reply
    run_id: str | None = Field(None, description="the Run that planned this turn")


class RecordedCall(BaseModel):
    """A call a service is known to have answered, with its answer's records (SGD's `service_call` and
    `service_results`): what the replay executor answers with."""
    api: str
    args: dict[str, str]
    results: list[dict[str, str]] = []


class SessionState(BaseModel):
    id: str = Field(default_factory=lambda: uuid.uuid4().hex)
    domain: str
    pack_digest: str | None = Field(None, description="the version of the domain's pack every turn uses")
    today: str
    executor: str = Field("simulated", description="how calls are carried out: simulated, http or replay")
    recorded: list[RecordedCall] = Field([], description="the replay executor's known answers")
    owner: str | None = Field(None, description="the id of the API key that opened it (not the key)")
    goals: list[Given] = []
    executed: list[ExecutedCall] = []
    pending: tuple[str, str] | None = Field(None, description="(goal id, argument) the agent asked for")
    asked: list[str] = Field([], description="every slot asked, in order (repeats show redundant asks)")
    awaiting: list[Call] | None = Field(None, description="calls read back to the user, waiting for a yes")
    choosing: int | None = Field(None, description="the place in `executed` of a lookup that found several "
                                                   "things, shown to the user, waiting for which one")
    confirmed: list[Call] = Field([], description="calls with effects the user said yes to")
    searches: list[str] = Field([], description="goal ids of searches added because the user did not know a "
                                                "value they find: they run as soon as they can")
    strikes: int = Field(0, description="answers in a row that left the standing question unanswered")
    turns: list[Turn] = []
    ended: Literal["done", "fail", "handoff"] | None = None
    end_reason: str | None = Field(None, description="why the session ended (done, cancelled, a failure, a handoff)")

    def calls(self) -> list[Call]:
        """The calls carried out so far, without what they returned (what a reply lists)."""
        return [Call(api=c.api, args=c.args) for c in self.executed]

    def ir(self) -> str:
        """The session's goals and the values given so far, as IR (what each turn plans from)."""
        facts = []
        for given in self.goals:
            facts.append(IRFact(predicate="_goal", arguments=[given.goal_id, given.goal], constants=[True, True]))
            facts += [IRFact(predicate=f"_{name}", arguments=[given.goal_id, value], constants=[True, False])
                      for name, value in given.values.items()]
            facts += [IRFact(predicate=f"_{name}", arguments=[given.goal_id, ref], constants=[True, True])
                      for name, ref in given.refs.items()]
        return "".join(f.render() + "\n" for f in facts)
