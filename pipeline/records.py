"""Typed artifacts passed between stages, and the Run record that holds them all."""

from __future__ import annotations

import uuid
from datetime import datetime, timezone
from typing import Literal

import clingo
from pydantic import BaseModel, Field

StageName = Literal["translate", "check", "materialize", "compile", "plan"]
FailureKind = Literal["ir_rejected", "domain_error", "out_of_domain", "no_plan", "planner_timeout",
                      "unknown_domain", "internal"]


class StageError(Exception):
    """A request that cannot go on, with the stage that stopped it and a message for the user."""

    def __init__(self, stage: str, kind: str, message: str, details: list[str] | None = None):
        super().__init__(message)
        self.stage, self.kind, self.message = stage, kind, message
        self.details = details or []

    def to_failure(self) -> "Failure":
        return Failure(stage=self.stage, kind=self.kind, message=self.message, details=self.details)


class Failure(BaseModel):
    stage: str
    kind: FailureKind
    message: str
    details: list[str] = []


class IRFact(BaseModel):
    predicate: str
    arguments: list[str | int]
    constants: list[bool] = Field(description="for each argument, whether it is a constant (else a value)")

    def render(self) -> str:
        """The fact as ASP text; clingo's own symbols do the quoting, so no value can break out."""
        args = [clingo.Function(a) if const else (clingo.Number(a) if isinstance(a, int) else clingo.String(a))
                for a, const in zip(self.arguments, self.constants)]
        return f"{self.predicate}({', '.join(str(a) for a in args)})."


class CheckedIR(BaseModel):
    facts: list[IRFact]

    @property
    def text(self) -> str:
        return "".join(f.render() + "\n" for f in self.facts)


LOOKUP = "lookup"  # a shortlist entry's `chosen_by` for a search added to find what another goal needs


class Binding(BaseModel):
    """How one API argument gets its value."""

    kind: Literal["value", "ref", "missing", "default", "omitted"] = Field(
        description="value: given; ref: another call's output; missing: asked for; default: an optional "
                    "argument not given, carrying the pack's default; omitted: optional, not given, no default")
    value: str | None = None
    ref: str | None = Field(None, description="goal id whose output this argument is")


class GoalCall(BaseModel):
    goal_id: str
    api: str
    args: dict[str, Binding]


class Materialized(BaseModel):
    goals: list[GoalCall]
    errors: list[str] = []
    unreadable: list[str] = Field([], description="words the normalisers could not read (asked for instead)")
    atoms: str = Field("", description="the shown atoms of the model, one per line")


class TaskPDDL(BaseModel):
    text: str
    calls: dict[str, str] = Field(description="call object -> goal id")
    slots: dict[str, str] = Field(description="'goal_id.argument' -> the var object holding it")
    # The same task as data, so the planner builds it in memory instead of parsing the text.
    objects: dict[str, list[str]] = Field({}, description="PDDL type -> the task's objects of that type")
    init: list[tuple[str, ...]] = Field([], description="initial facts: (predicate, object, ...)")
    goal: list[tuple[str, ...]] = Field([], description="goal facts: (predicate, object, ...)")


class PlanArg(BaseModel):
    value: str | None = None
    default: bool = Field(False, description="the value is the pack's default for an optional argument")
    ref: int | None = Field(None, description="index of the call whose output this is")
    get_info: str | None = Field(None, description="argument type asked for with get_info_api")


class PlanCall(BaseModel):
    api: str
    var: str
    goal_id: str | None = Field(None, description="the IR goal this call carries out")
    args: dict[str, PlanArg]
    lookup: bool = Field(False, description="a search the planner added to find what a later call needs, "
                                            "where it costs less than asking the user")


class Plan(BaseModel):
    calls: list[PlanCall]
    text: str
    planner_actions: list[str] = Field(description="the planner's plan, action by action")
    cached: bool = Field(False, description="the planner's actions came from the plan cache (a task of the "
                                            "same structure was planned before)")


class ClauseAnalysis(BaseModel):
    text: str
    act: Literal["asks", "phrase", "tells"] = Field(description="asks (a question, an imperative, a want), phrase "
                                                    "(a bare noun phrase), tells (context)")
    refers_back: bool = False
    goals: list[dict] = Field([], description="the best goals for its words: goal, score")
    refused: str = Field("", description="why its words name no call though they ask: a deed the API does not do")


class ValueAnalysis(BaseModel):
    argument: str
    text: str = Field(description="the words")
    start: int
    end: int
    value: str = Field(description="what the words read as")
    source: str = Field("", description="the words it was read in (the request, or one goal's words)")
    probability: float | None = Field(None, description="the slot head's: these words are this argument's value")
    kept: bool = True
    why: str = Field("", description="why it was dropped")


class Analysis(BaseModel):
    """What the language component made of the request, before the LLM writes anything."""
    clauses: list[ClauseAnalysis] = []
    goals: list[dict] = Field([], description="the goals chosen, with score, the words they came from and the "
                                             "words pointed back at")
    values: list[ValueAnalysis] = []
    learned: dict[str, bool] = Field({}, description="which learned parts took part (goal, value, span, "
                                                     "tagger: the fine-tuned argument tagger)")
    seconds: float = 0.0


class Run(BaseModel):
    """One request: every artifact, each stage's wall time, and how it ended."""

    id: str = Field(default_factory=lambda: uuid.uuid4().hex)
    created: str = Field(default_factory=lambda: datetime.now(timezone.utc).isoformat())
    query: str = ""
    domain: str
    pack_digest: str | None = Field(None, description="the version of the domain's pack every stage uses (the "
                                                      "digest of its files), fixed when the run is made")
    today: str
    status: Literal["queued", "running", "succeeded", "failed"] = "queued"
    failure: Failure | None = None
    owner: str | None = Field(None, description="the id of the API key that submitted it (not the key)")
    translator: str | None = Field(None, description="hf, openai, or None when the IR was given")
    constrain: bool = True
    goal_choice: str = "retrieve"
    shortlist: list[dict] = Field([], description="retrieved goals with scores and the words they came from")
    analysis: Analysis | None = Field(None, description="clauses, goal candidates and value readings")
    prompt: str | None = None
    llm_output: str | None = None
    llm_stats: dict = {}
    ir: str | None = None
    checked_ir: CheckedIR | None = None
    materialized: Materialized | None = None
    task_pddl: TaskPDDL | None = None
    domain_pddl: str | None = None
    plan: Plan | None = None
    timings_ms: dict[str, float] = {}
    trace_context: dict[str, str] = Field({}, description="the W3C trace context (traceparent) of the run's trace, "
                                                         "which every stage's span continues; empty when tracing "
                                                         "is off")
