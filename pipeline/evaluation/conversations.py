"""Conversation tests as data (in the manner of Rasa's end-to-end tests): YAML files of cases, each a
conversation's user steps with the reply expected after each, and what the session must end with.

```yaml
domain: restaurant_reservation
today: "2025-06-02"
cases:
  - name: a booking is read back and made on a yes
    steps:
      - user: could you reserve Casa Verde for 3 people on June 12 at 8:30pm
        expect: ask                 # the reply's kind
        slot: contact_name          # ask: the slot asked
      - user: Noor Haddad
        expect: ask
      - user: 312-555-0147
        expect: confirm
        says: [Casa Verde, "20:30"] # words the reply's text holds
        runs: []                    # the calls carried out during this step, by API (here: none)
      - user: yes
        expect: done
    end:
      ended: done                   # done, fail or handoff
      reason: carried out           # words of the state's end_reason
      executed:                     # calls carried out, each with the arguments given (others unchecked)
        - {api: book_table, args: {contact_name: Noor Haddad}}
      not_executed: []              # APIs that must not have run
      values: {party_size: "3"}     # arguments' values as the last plan read them
```

`run_cases` plays each case against a `SessionEngine` and returns, per case, the first thing that differs.
`nesyplan test-conversations DIR` runs every file of a folder; `make test` runs the shipped ones.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from pipeline.sessions.records import ArgValue, Reply, SessionState


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Step(Strict):
    user: str
    expect: Literal["ask", "confirm", "done", "fail", "handoff"]
    slot: str | None = None
    says: list[str] = Field([], description="words the reply's text must hold (case-insensitive)")
    runs: list[str] | None = Field(None, description="the APIs carried out during this step, in order")


class Expected(BaseModel):
    model_config = ConfigDict(extra="forbid")
    api: str
    args: dict[str, ArgValue] = {}


class End(Strict):
    ended: Literal["done", "fail", "handoff"] | None = None
    reason: str | None = None
    executed: list[Expected] = []
    not_executed: list[str] = []
    values: dict[str, str] = {}


class Case(Strict):
    name: str
    steps: list[Step] = Field(min_length=1)
    end: End = End()


class CaseFile(Strict):
    domain: str
    today: str
    cases: list[Case] = Field(min_length=1)


class CaseResult(BaseModel):
    file: str
    name: str
    passed: bool
    failure: str = ""
    transcript: list[tuple[str, str, str]] = Field([], description="(user, reply kind, reply text) per step")


class CaseFileError(ValueError):
    pass


def load_cases(path: Path) -> CaseFile:
    try:
        return CaseFile.model_validate(yaml.safe_load(Path(path).read_text(encoding="utf-8")))
    except (yaml.YAMLError, ValidationError) as exc:
        raise CaseFileError(f"{path}: {exc}") from exc


def case_files(folder: Path) -> list[Path]:
    return sorted([*Path(folder).glob("*.yaml"), *Path(folder).glob("*.yml")])


def _step_failure(step: Step, reply: Reply, ran: list[str]) -> str:
    if reply.kind != step.expect:
        return f"expected {step.expect}, got {reply.kind}: {reply.text}"
    if step.slot is not None and reply.slot != step.slot:
        return f"expected a question for {step.slot}, got one for {reply.slot}: {reply.text}"
    missing = [w for w in step.says if w.lower() not in reply.text.lower()]
    if missing:
        return f"the reply does not say {missing}: {reply.text}"
    if step.runs is not None and ran != step.runs:
        return f"expected calls {step.runs} during this step, got {ran}"
    return ""


def _end_failure(end: End, state: SessionState) -> str:
    if end.ended is not None and state.ended != end.ended:
        return f"expected the session to end {end.ended}, it is {state.ended} ({state.end_reason})"
    if end.reason is not None and end.reason.lower() not in (state.end_reason or "").lower():
        return f"expected an end reason with {end.reason!r}, got {state.end_reason!r}"
    for expected in end.executed:
        if not any(call.api == expected.api and all(call.args.get(k) == v for k, v in expected.args.items())
                   for call in state.executed):
            return f"no call {expected.api}{expected.args} was carried out: {[c.api for c in state.executed]}"
    ran = [api for api in end.not_executed if any(call.api == api for call in state.executed)]
    if ran:
        return f"{ran} ran, and must not have"
    values = {name: value for given in state.goals for name, value in given.normalized.items()}
    wrong = {name: values.get(name) for name, value in end.values.items() if values.get(name) != value}
    if wrong:
        return f"values differ from {end.values}: {wrong}"
    return ""


def run_case(engine, domain: str, today: str, case: Case, file: str = "") -> CaseResult:
    state = engine.open(domain, today)
    transcript = []
    for step in case.steps:
        before = len(state.executed)
        reply = engine.reply(state, step.user)
        transcript.append((step.user, reply.kind, reply.text))
        failure = _step_failure(step, reply, [call.api for call in state.executed[before:]])
        if failure:
            return CaseResult(file=file, name=case.name, passed=False, failure=f"step {len(transcript)}: {failure}",
                              transcript=transcript)
    failure = _end_failure(case.end, state)
    return CaseResult(file=file, name=case.name, passed=not failure, failure=failure and f"end: {failure}",
                      transcript=transcript)


def run_cases(engine, folder: Path) -> list[CaseResult]:
    """Every case of every file of a folder (a file that cannot be read: one failed result for it)."""
    results = []
    for path in case_files(folder):
        try:
            cases = load_cases(path)
        except CaseFileError as exc:
            results.append(CaseResult(file=path.name, name="(the file)", passed=False, failure=str(exc)))
            continue
        results += [run_case(engine, cases.domain, cases.today, case, path.name) for case in cases.cases]
    return results
