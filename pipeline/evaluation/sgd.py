"""`nesyplan eval-sgd`: the Schema-Guided Dialogue corpus as a yardstick, read from its own files.

Packs are imported from the schema (`authoring/sgd_packs.py`) into a scratch packs root; the dialogues
give the cases:

- **openings**: for each dialogue and service, the first user turn with an active intent. Gold: the
  intent, and the canonical value of every slot the turn informs that the intent takes (`dontcare` is no
  value). Exact = the plan makes one call, the intent's; every gold value is right (`values/canonical.py`);
  no value nobody gave; and it asks for exactly the required slots the turn did not give.
- **out-of-domain probes**: openings of services of another domain (the part of the service name before
  `_`) sent to the pack: each must be refused.
- **conversations**: a simulated user opens with that turn. Asked for a slot, it answers with the dialogue's
  own user turn that gave the value the dialogue's first call of the opening intent has for it (whatever
  else that turn volunteers comes with it, as it did to the dialogue's system); asked again, or where no
  later turn gave it, with the words a user turn wrote the value in (else the canonical value): the
  `words` user answers only so. Calls run on the replay executor, which answers with the dialogue's own
  `service_results`. Success = the agent executed that call (method and parameters; a parameter left out
  is the intent's default or no constraint).

A value is right when it is the gold's canonical value or the words a user turn of the dialogue wrote it
in (SGD's annotation says they are the same value: 'Bourbon Steak' of 'Bourbon Steak Restaurant'), as SGD's
own metric takes any of a value's written forms.

With `schema` an SGD-X variant, the same dialogues run against packs imported from the re-worded schema:
its services, slots and intents are the original's in the same order (as SGD-X writes them), so gold
names are mapped by position.
"""

from __future__ import annotations

import gzip
import json
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Literal, get_args

from pydantic import BaseModel, Field

from pipeline.language.sgd_corpus import domain
from pipeline.packs.sgd_schema import SgdService, load_schema, pack_name, snake
from pipeline.evaluation.calls import percentile
from pipeline.sessions.records import RecordedCall
from pipeline.values.canonical import NO_CONSTRAINT, same_call, same_value

TODAY = "2019-03-01"  # the dialogues are set in early March 2019
MAX_USER_MESSAGES = 12
NOT_GIVEN = "I don't know."


def read_dialogues(data: Path) -> Iterator[dict]:
    """Every dialogue of `data/dialogues_*.json[.gz]`, in file order."""
    files = sorted([*data.glob("dialogues_*.json"), *data.glob("dialogues_*.json.gz")])
    if not files:
        raise FileNotFoundError(f"no dialogues_*.json or dialogues_*.json.gz in {data}")
    for file in files:
        opener = gzip.open if file.suffix == ".gz" else open
        with opener(file, "rt", encoding="utf-8") as handle:
            yield from json.load(handle)


class Opening(BaseModel):
    dialogue_id: str
    service: str
    intent: str
    text: str
    values: dict[str, str] = Field(description="slot -> canonical value the turn gives (slots the intent takes)")
    no_constraint: list[str] = Field([], description="slots the turn says any value of is fine")
    written: dict[str, list[str]] = Field({}, description="slot -> the words users wrote its gold value in, as the "
                                                          "dialogue annotates them (also right, as in SGD's own metric)")


class Conversation(BaseModel):
    opening: Opening
    target: dict[str, str] = Field(description="the parameters of the dialogue's first call of the intent")
    answers: dict[str, str] = Field(description="slot -> the words the simulated user answers with")
    turns: dict[str, str] = Field({}, description="slot -> the dialogue's user turn that gave the target's value, "
                                                  "after the opening and before the call: what the user answers first")
    written: dict[str, list[str]] = Field({}, description="slot -> the words users wrote the target's value in")
    recorded: list[RecordedCall] = Field(description="the service's calls in the dialogue, with their results")


def _intent_slots(service: SgdService, intent: str) -> tuple[list[str], dict[str, str]]:
    spec = next(i for i in service.intents if i.name == intent)
    return spec.required_slots, spec.optional_slots


def cases(dialogues: Iterator[dict], services: dict[str, SgdService]) -> tuple[list[Opening], list[Conversation]]:
    """The openings and conversations of the dialogues, for the services the schema has."""
    openings, conversations = [], []
    for dialogue in dialogues:
        user_words: dict[tuple[str, str, str], list[str]] = defaultdict(list)  # (service, slot, canonical) -> as written
        for turn in dialogue["turns"]:
            if turn["speaker"] != "USER":
                continue
            for frame in turn["frames"]:
                for action in frame["actions"]:
                    if action["act"] == "INFORM" and action["values"] and action["canonical_values"]:
                        forms = user_words[frame["service"], action["slot"], action["canonical_values"][0]]
                        forms += [v for v in action["values"] if v not in forms]
        for name in dialogue["services"]:
            if name not in services:
                continue
            opening = _opening(dialogue, services[name])
            if opening is None:
                continue
            opening.written = _written(user_words, name, opening.values)
            openings.append(opening)
            calls = [f for t in dialogue["turns"] if t["speaker"] == "SYSTEM" for f in t["frames"]
                     if f["service"] == name and "service_call" in f]
            target = next((f["service_call"]["parameters"] for f in calls
                           if f["service_call"]["method"] == opening.intent), None)
            if target is None:
                continue
            recorded = [RecordedCall(api=snake(f["service_call"]["method"]), args=f["service_call"]["parameters"],
                                     results=[{k: str(v) for k, v in r.items()} for r in f.get("service_results", [])])
                        for f in calls]
            answers = {slot: (user_words.get((name, slot, value)) or [value])[0] for slot, value in target.items()}
            conversations.append(Conversation(opening=opening, target=target, answers=answers,
                                              turns=_answer_turns(dialogue, name, opening.intent, target),
                                              written=_written(user_words, name, target), recorded=recorded))
    return openings, conversations


def _written(user_words: dict, service: str, values: dict[str, str]) -> dict[str, list[str]]:
    forms = {slot: [w for w in user_words.get((service, slot, value), []) if w != value]
             for slot, value in values.items()}
    return {slot: words for slot, words in forms.items() if words}


def _answer_turns(dialogue: dict, service: str, intent: str, target: dict[str, str]) -> dict[str, str]:
    """For each slot of the call, the first user turn after the opening that informs its value, up to the
    system turn that makes the call: the user's own answer, with whatever else it volunteers."""
    turns: dict[str, str] = {}
    opened = False
    for turn in dialogue["turns"]:
        frames = [f for f in turn["frames"] if f["service"] == service]
        if turn["speaker"] == "SYSTEM":
            if any(f.get("service_call", {}).get("method") == intent for f in frames):
                break
            continue
        if not opened:  # turns before the opening, and the opening itself (`_opening`'s turn)
            opened = any(_active_intent(f) for f in frames)
            continue
        for frame in frames:
            for action in frame["actions"]:
                value = (action["canonical_values"] or [None])[0]
                if action["act"] == "INFORM" and target.get(action["slot"]) == value:
                    turns.setdefault(action["slot"], turn["utterance"])
    return turns


def _active_intent(frame: dict) -> str | None:
    intent = frame.get("state", {}).get("active_intent", "NONE")
    return None if intent == "NONE" else intent


def _opening(dialogue: dict, service: SgdService) -> Opening | None:
    for turn in dialogue["turns"]:
        if turn["speaker"] != "USER":
            continue
        for frame in turn["frames"]:
            intent = _active_intent(frame)
            if frame["service"] != service.service_name or intent is None:
                continue
            required, optional = _intent_slots(service, intent)
            values, anything = {}, []
            for action in frame["actions"]:
                if action["act"] != "INFORM" or action["slot"] not in [*required, *optional]:
                    continue
                value = (action["canonical_values"] or action["values"] or [None])[0]
                if value == NO_CONSTRAINT:
                    anything.append(action["slot"])
                elif value is not None:
                    values[action["slot"]] = value
            return Opening(dialogue_id=dialogue["dialogue_id"], service=service.service_name, intent=intent,
                           text=turn["utterance"], values=values, no_constraint=anything)
    return None


# --- SGD-X: the same cases under re-worded names -------------------------------------------------------

def rename_map(original: list[SgdService], variant: list[SgdService]) -> dict[str, tuple[SgdService, dict[str, str]]]:
    """Original service name -> (its variant, original slot or intent name -> the variant's)."""
    if len(original) != len(variant):
        raise ValueError(f"the variant schema has {len(variant)} services, the original {len(original)}")
    out = {}
    for a, b in zip(original, variant):
        if len(a.slots) != len(b.slots) or len(a.intents) != len(b.intents):
            raise ValueError(f"{b.service_name} does not have the slots and intents of {a.service_name}")
        names = {x.name: y.name for x, y in zip(a.slots, b.slots)}
        names.update({x.name: y.name for x, y in zip(a.intents, b.intents)})
        out[a.service_name] = (b, names)
    return out


def renamed(opening: Opening, service: SgdService, names: dict[str, str]) -> Opening:
    return opening.model_copy(update={"service": service.service_name, "intent": names[opening.intent],
                                      "values": {names[k]: v for k, v in opening.values.items()},
                                      "no_constraint": [names[k] for k in opening.no_constraint],
                                      "written": {names[k]: v for k, v in opening.written.items()}})


def renamed_conversation(case: Conversation, service: SgdService, names: dict[str, str]) -> Conversation:
    api_names = {snake(old): snake(new) for old, new in names.items()}  # a recorded call names its pack API
    return Conversation(opening=renamed(case.opening, service, names),
                        target={names[k]: v for k, v in case.target.items()},
                        answers={names[k]: v for k, v in case.answers.items()},
                        turns={names[k]: v for k, v in case.turns.items()},
                        written={names[k]: v for k, v in case.written.items()},
                        recorded=[RecordedCall(api=api_names.get(c.api, c.api),
                                               args={names[k]: v for k, v in c.args.items()},
                                               results=[{names.get(k, k): v for k, v in r.items()} for r in c.results])
                                  for c in case.recorded])


# --- scoring -------------------------------------------------------------------------------------------

class OpeningResult(BaseModel):
    dialogue_id: str
    service: str
    exact: bool
    goal_right: bool
    true_values: int = 0
    given_values: int = Field(0, description="values the agent wrote (defaults excluded)")
    gold_values: int = 0
    invented: list[str] = []
    wrong: list[str] = []
    missed: list[str] = []
    asked_wrong: list[str] = Field([], description="required slots asked though given, or not asked though not given")
    seconds: float = 0.0
    failure: str | None = None


def score_opening(opening: Opening, run, pack) -> OpeningResult:
    """One opening's plan (a Run, pipeline's or baseline's) against its gold."""
    api = pack.api_of_operation(opening.intent)
    required = []
    if api is not None:
        spec = pack.spec.apis[api]
        required = [a for a in spec.arguments if a not in spec.optional]
    calls = run.plan.calls if run.plan is not None else []
    goal_right = len(calls) == 1 and calls[0].api == api
    given = {a: arg.value for c in calls for a, arg in c.args.items()
             if arg.value is not None and not arg.default and not _the_default_gold_leaves(pack, c.api, a, arg.value,
                                                                                           opening)}
    asked = {a for c in calls for a, arg in c.args.items() if arg.get_info}
    result = OpeningResult(dialogue_id=opening.dialogue_id, service=opening.service, exact=False, goal_right=goal_right,
                           gold_values=len(opening.values), given_values=len(given),
                           failure=run.failure.message if run.failure else None)
    for slot, value in given.items():
        if slot not in opening.values:
            result.invented.append(f"{slot}={value!r}")
        elif _same_as_gold(pack.normalizers.get(slot, "title_text"), value, opening.values[slot],
                           opening.written.get(slot, [])):
            result.true_values += 1
        else:
            result.wrong.append(f"{slot}={value!r} (gold {opening.values[slot]!r})")
    result.missed = [f"{s}={v!r}" for s, v in opening.values.items() if s not in given]
    if goal_right:
        should_ask = {s for s in required if s not in opening.values and s not in opening.no_constraint}
        result.asked_wrong = sorted((asked & set(required)) ^ should_ask)
    result.exact = goal_right and not (result.invented or result.wrong or result.missed or result.asked_wrong)
    return result


def _the_default_gold_leaves(pack, api: str, name: str, value: str, opening: Opening) -> bool:
    """Whether a value is the API's default for an argument the gold leaves out: SGD annotates no value
    where the service's default applies (a date said as "today" where it defaults to today), and the call
    is the same either way, as a conversation's calls are compared (`same_call`). Counted as a default,
    not as a value given."""
    default = pack.spec.apis[api].optional.get(name) if api in pack.spec.apis else None
    return name not in opening.values and default is not None and \
        same_value(pack.normalizers.get(name, "title_text"), value, default)


def _same_as_gold(normalizer: str, ours: str | None, gold: str | None, written: list[str]) -> bool:
    return same_value(normalizer, ours, gold) or any(same_value(normalizer, ours, w) for w in written)


def _as_gold(normalizers: dict[str, str], args: dict[str, str], case: Conversation) -> dict[str, str]:
    """The call's arguments, a value written as the user wrote the target's read as the target's."""
    return {name: case.target[name] if name in case.target and _same_as_gold(
        normalizers.get(name, "lowercase_text"), value, case.target[name], case.written.get(name, [])) else value
        for name, value in args.items()}


def is_target(case: Conversation, pack, api: str | None, name: str, args: dict[str, str]) -> bool:
    """Whether a call is the dialogue's first call of the opening intent."""
    optional = pack.spec.apis[api].optional if api else {}
    return name == api and same_call(pack.normalizers, optional, _as_gold(pack.normalizers, args, case), case.target)


def refused(run) -> bool:
    return run.plan is None and run.failure is not None and run.failure.kind == "out_of_domain"


class ConversationResult(BaseModel):
    dialogue_id: str
    service: str
    success: bool
    turns: int
    asked: list[str] = []
    executed: list[str] = []
    target: str = ""
    seconds: list[float] = []


USERS = ("turns", "words")


def simulate(case: Conversation, pack, reply: Callable[[str], dict], executed: Callable[[], list[tuple[str, dict]]],
             user: str = "turns") -> ConversationResult:
    """Play the dialogue's user against an agent: `reply` maps a message to a reply object, `executed`
    gives the calls carried out so far with their argument values. Asked for a slot, the user of `turns`
    says the dialogue's own turn that gave its value (once; what else it says comes with it), then its
    words for the value alone, as the user of `words` always does."""
    if user not in USERS:
        raise ValueError(f"unknown simulated user {user!r} ({', '.join(USERS)})")
    api = pack.api_of_operation(case.opening.intent)
    message, seconds, asked = case.opening.text, [], []
    said = {case.opening.text}
    reply_kind = "ask"
    while len(seconds) < MAX_USER_MESSAGES and reply_kind in ("ask", "confirm"):
        started = time.perf_counter()
        answer = reply(message)
        seconds.append(time.perf_counter() - started)
        reply_kind = answer.get("kind")
        if reply_kind == "ask":
            slot = str(answer.get("slot"))
            asked.append(slot)
            turn = case.turns.get(slot) if user == "turns" else None
            message = turn if turn and turn not in said else case.answers.get(slot, NOT_GIVEN)
            said.add(message)
        elif reply_kind == "confirm":
            message = confirm_answer(case, pack, api, answer)
    calls = executed()
    success = any(is_target(case, pack, api, name, args) for name, args in calls)
    return ConversationResult(dialogue_id=case.opening.dialogue_id, service=case.opening.service, success=success,
                              turns=len(seconds), asked=asked, seconds=seconds,
                              executed=[f"{n}({', '.join(f'{k}={v}' for k, v in a.items())})" for n, a in calls],
                              target=f"{api}({', '.join(f'{k}={v}' for k, v in case.target.items())})")


def confirm_answer(case: Conversation, pack, api: str | None, reply: dict) -> str:
    """The user on a read-back, as the sessions SPEC's user: yes when the call is the dialogue's (beside
    calls of APIs the dialogue also calls: a search the user asked for on the way), else the dialogue's
    words for the first argument that differs, or a plain no."""
    from pipeline.evaluation.sessions import NO, NO_WITH, YES

    for call in reply.get("calls") or []:
        args = {name: value for name, value in call["args"].items() if not isinstance(value, dict)}
        if is_target(case, pack, api, call["api"], args):
            continue
        if call["api"] != api:  # another call: fine where the dialogue's system made one of it too
            if call["api"] in {recorded.api for recorded in case.recorded}:
                continue
            return NO
        optional = pack.spec.apis[api].optional if api else {}
        args = _as_gold(pack.normalizers, args, case)
        wrong = next((name for name in [*args, *case.target] if not same_call(
            pack.normalizers, optional, {k: v for k, v in args.items() if k == name},
            {k: v for k, v in case.target.items() if k == name})), None)
        return NO_WITH + case.answers[wrong] if wrong in case.answers else NO
    return YES


def executed_values(state) -> list[tuple[str, dict[str, str]]]:
    """A session's calls with each argument's value (a reference resolved to what the call received)."""
    out = []
    for call in state.executed:
        args = {}
        for name, value in call.args.items():
            args[name] = state.executed[value["ref"]].value_for(name) if isinstance(value, dict) else str(value)
        out.append((call.api, args))
    return out


# --- figures -------------------------------------------------------------------------------------------

def _rate(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


SummaryGroup = Literal["all", "seen", "unseen"]  # the figures over every service, then over each half


def summarize(openings: list[OpeningResult], probes: list[tuple[str, bool, float]],
              conversations: list[ConversationResult], seen: set[str]) -> dict:
    """Figures per service, for services seen in train and not, and overall."""
    groups: dict[str, dict[str, list]] = defaultdict(lambda: {"openings": [], "probes": [], "conversations": []})

    def add(kind: str, service: str, item) -> None:  # to its service, its side of train, and all
        for key in (service, "seen" if service in seen else "unseen", "all"):
            groups[key][kind].append(item)

    for r in openings:
        add("openings", r.service, r)
    for service, was_refused, seconds in probes:
        add("probes", service, (was_refused, seconds))
    for r in conversations:
        add("conversations", r.service, r)
    out = {}
    for key, g in groups.items():
        o, p, c = g["openings"], g["probes"], g["conversations"]
        latencies = [r.seconds for r in o] + [s for _, s in p]
        turn_latencies = [s for r in c for s in r.seconds]
        out[key] = {
            "openings": len(o),
            "openings_exact": _rate(sum(r.exact for r in o), len(o)),
            "goal_accuracy": _rate(sum(r.goal_right for r in o), len(o)),
            "slot_precision": _rate(sum(r.true_values for r in o), sum(r.given_values for r in o)),
            "slot_recall": _rate(sum(r.true_values for r in o), sum(r.gold_values for r in o)),
            "probes": len(p),
            "ood_refused": _rate(sum(x for x, _ in p), len(p)),
            "conversations": len(c),
            "conversation_success": _rate(sum(r.success for r in c), len(c)),
            "latency_ms": {"p50": round(percentile(latencies, 50) * 1000, 1),
                           "p90": round(percentile(latencies, 90) * 1000, 1)} if latencies else None,
            "turn_latency_ms": {"p50": round(percentile(turn_latencies, 50) * 1000, 1),
                                "p90": round(percentile(turn_latencies, 90) * 1000, 1)} if turn_latencies else None,
            # the counts behind the rates, so that runs over disjoint services add up (`eval-sgd-cv`)
            "counts": {"exact": sum(r.exact for r in o), "goal_right": sum(r.goal_right for r in o),
                       "true_values": sum(r.true_values for r in o), "given_values": sum(r.given_values for r in o),
                       "gold_values": sum(r.gold_values for r in o), "refused": sum(x for x, _ in p),
                       "succeeded": sum(r.success for r in c)},
        }
    first = get_args(SummaryGroup)
    order = [*first, *sorted(k for k in out if k not in first)]
    return {key: out[key] for key in order if key in out}


def probe_cases(openings: list[Opening], per_service: int) -> dict[str, list[Opening]]:
    """For each service, up to `per_service` openings of services of other domains, taken round-robin
    over those services so that no one service fills the probes."""
    by_service: dict[str, list[Opening]] = defaultdict(list)
    for o in openings:
        by_service[o.service].append(o)
    out = {}
    for service in by_service:
        others = [by_service[s] for s in sorted(by_service) if domain(s) != domain(service)]
        picked, i = [], 0
        while len(picked) < per_service and any(i < len(x) for x in others):
            picked += [x[i] for x in others if i < len(x)][: per_service - len(picked)]
            i += 1
        out[service] = picked
    return out


def load_services(path: Path) -> dict[str, SgdService]:
    return {s.service_name: s for s in load_schema(path)}


# --- the run -------------------------------------------------------------------------------------------

def services_to_import(data: Path, schema: Path | None = None, services: list[str] | None = None) -> list[str]:
    """The services of the schema packs are imported from (the variant's names under SGD-X)."""
    if schema is None:
        return list(services or load_services(data / "schema.json"))
    mapping = rename_map(load_schema(data / "schema.json"), load_schema(schema))
    return [variant.service_name for name, (variant, _) in mapping.items() if not services or name in services]


def evaluate_sgd(data: Path, packs_dir: Path, schema: Path | None = None, services: list[str] | None = None,
                 limit: int | None = None, agent: str = "pipeline", translator: str = "hf",
                 conversations: bool = True, probes: int | None = None, seen_schema: Path | None = None,
                 user: str = "turns", learned_from: set[str] | None = None, progress: Callable[[str, int], None] = lambda _what, _total: None) -> dict:
    """Play the cases against the packs imported into `packs_dir` (`import_services` of the same schema:
    the caller imports, since evaluation does not write packs); return the summary with every failure's reasons.
    `limit`: openings (and conversations) per service; `probes`: out-of-domain probes per service (default:
    as many as its openings); `user`: the simulated user of conversations (`simulate`); `learned_from`: the
    services the learned parts saw (default: those of `seen_schema`, else of the train split beside `data`)."""
    from pipeline.llm.baseline import run_baseline
    from pipeline.packs.pack import load_pack, using_packs_root
    from pipeline.run import backend_for, run_pipeline, warm_up
    from pipeline.sessions.engine import SessionEngine
    from pipeline.sessions.react import ReactAgent

    if agent not in ("pipeline", "llm"):
        raise ValueError(f"unknown agent {agent!r} (pipeline, llm)")
    if user not in USERS:
        raise ValueError(f"unknown simulated user {user!r} ({', '.join(USERS)})")
    original = load_services(data / "schema.json")
    chosen = [s for s in original if not services or s in services]
    unknown = sorted(set(services or []) - set(original))
    if unknown:
        raise ValueError(f"no service {unknown[0]!r} in {data / 'schema.json'} ({', '.join(original)})")
    openings, talks = cases(read_dialogues(data), {s: original[s] for s in chosen})
    packs_of = {s: s for s in chosen}
    if schema is not None:  # SGD-X: the same cases, the variant's names
        mapping = rename_map(list(original.values()), load_schema(schema))
        openings = [renamed(o, *mapping[o.service]) for o in openings]
        talks = [renamed_conversation(c, *mapping[c.opening.service]) for c in talks]
        packs_of = {mapping[s][0].service_name: s for s in chosen}
    seen_file = seen_schema or data.parent / "train" / "schema.json"
    if learned_from is not None:
        seen_original = set(learned_from)
    else:
        seen_original = set(load_services(seen_file)) if seen_file.is_file() else set()
    seen = {variant for variant, source in packs_of.items() if source in seen_original}
    openings = _per_service(openings, limit, lambda o: o.service)
    talks = _per_service(talks, limit, lambda c: c.opening.service) if conversations else []
    probe_sets = _probe_sets(openings, probes)
    backend = backend_for(translator)
    opening_results, probe_results, talk_results = [], [], []
    with using_packs_root(packs_dir):
        # latency is understanding and planning: what a worker loads once at start is paid here, and reported
        progress("loading the model and the packs", 0)
        loaded = warm_up([pack_name(s) for s in packs_of], translator)
        def plan(text: str, service: str):
            pack = load_pack(pack_name(service))
            started = time.perf_counter()
            if agent == "llm":
                run = run_baseline(text, TODAY, pack, backend)
            else:
                run = run_pipeline(text, pack.name, TODAY, translator=translator)
            return run, pack, time.perf_counter() - started

        progress("openings", len(openings))
        for opening in openings:
            run, pack, seconds = plan(opening.text, opening.service)
            result = score_opening(opening, run, pack)
            result.seconds = seconds
            opening_results.append(result)
            progress("", 0)
        progress("out-of-domain probes", sum(len(v) for v in probe_sets.values()))
        for service, probe_openings in probe_sets.items():
            for probe in probe_openings:
                run, _pack, seconds = plan(probe.text, service)
                probe_results.append((service, refused(run), seconds))
                progress("", 0)
        progress("conversations", len(talks))
        for case in talks:
            pack = load_pack(pack_name(case.opening.service))
            engine = SessionEngine(translator, "replay") if agent == "pipeline" else ReactAgent(translator, "replay")
            state = engine.open(pack.name, TODAY)
            state.recorded = case.recorded
            talk_results.append(simulate(case, pack, lambda m: engine.reply(state, m).model_dump(exclude_none=True),
                                         lambda: executed_values(state), user))
            progress("", 0)
    summary = summarize(opening_results, probe_results, talk_results, seen)
    return {"agent": agent, "translator": translator, "data": str(data), "schema": str(schema or data / "schema.json"),
            "today": TODAY, "limit_per_service": limit, "user": user, "warm_up_s": {k: round(v, 2) for k, v in loaded.items()},
            "by": summary,
            "failures": {"openings": [r.model_dump(exclude_defaults=True) for r in opening_results if not r.exact],
                         "probes_accepted": [s for s, ok, _ in probe_results if not ok],
                         "conversations": [r.model_dump(exclude={"seconds"}) for r in talk_results if not r.success]}}


def _per_service(items: list, limit: int | None, service_of: Callable) -> list:
    if limit is None:
        return items
    counts: dict[str, int] = defaultdict(int)
    out = []
    for item in items:
        if counts[service_of(item)] < limit:
            counts[service_of(item)] += 1
            out.append(item)
    return out


def _probe_sets(openings: list[Opening], probes: int | None) -> dict[str, list[Opening]]:
    counts: dict[str, int] = defaultdict(int)
    for o in openings:
        counts[o.service] += 1
    sets = probe_cases(openings, max(counts.values(), default=0) if probes is None else probes)
    return {s: v[: counts[s] if probes is None else probes] for s, v in sets.items()}
