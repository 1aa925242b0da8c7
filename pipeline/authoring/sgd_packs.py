"""Schema-Guided Dialogue (SGD) service schemas as call packs: `nesyplan import-sgd SCHEMA.json`.

A business has a description of its API, not a corpus of conversations, so a pack is made from the schema
alone: each intent is a goal and an API; its required slots are arguments the plan asks for when the
request leaves them out; its optional slots are optional arguments carrying the schema's default
(`dontcare`, SGD's "no constraint", is no default: the call leaves the argument out); its result slots are
the fields of its answer. An input slot that another intent returns under the same name accepts that
intent's output, so "find a restaurant, then book it" flows the found name into the booking.

Each slot is read by a normaliser inferred from the schema's own words, by these rules, first match wins
(they name kinds of values, never services):

1. a `type` written on the slot (schema or overlay) is taken as it is;
2. categorical: values True/False -> `choice` (yes/no read as True/False, and the flag's feature named:
   `flag_synonyms`); all values whole numbers ->
   `integer`; otherwise -> `choice` over the listed values;
3. a count ("number of" in the description, or a name starting with `number_of`) -> `integer`;
4. a date or day (name or description) -> `future_date` (a day ahead: what people book, travel on or ask
   about), or `date` when the description speaks of the past;
5. a name the description says is a person's (person, recipient, contact, who, whom), or a part of a person's
   name (`first_name`, `last_name`, `surname`...) -> `person_name`;
6. money (amount, price, fare, cost, fee, balance) -> `amount`; 7. a time of day -> `time`;
8. a phone number -> `phone`; an email address -> `email`; a year -> `integer`;
9. anything else (places, venues, titles, addresses, free words) -> `title_text`, kept as written.

Hand additions live in `domains/<pack>/overlay.yaml` beside the generated pack and survive a re-import:
goal `examples` and `description`, `out_of_scope` requests, `max_goals`, `lexicon`, and per argument `description`,
`question`, `normalizer`, `values`, `synonyms`, `examples`.
"""

from __future__ import annotations

import re
from collections import Counter
from itertools import product
from pathlib import Path

import yaml
from pydantic import Field, ValidationError

from pipeline.authoring.writer import GENERIC_ERRORS, PackNotValid, pack_paths, typed_call_pack_files, write_validated_pack
from pipeline.language.values import NEGATIONS
from pipeline.language.names import name_part_of
from pipeline.language.words import name_words, same_things, split_run_together, word_list
from pipeline.packs.pack import NAME
from pipeline.packs.sgd_schema import (SgdSchemaError, SgdService, SgdSlot, StrictModel, closest_hint, load_schema,
                                       pack_name, snake)
from pipeline.values.aliases import words_for
from pipeline.values.lexicon import any_of, words_of
from pipeline.values.normalizers import NORMALIZERS

GENERATOR = "import-sgd"
# Names the generated PDDL and IR already use: a slot or intent named so would collide with them.
RESERVED = {"goal", "call", "var", "argtype", "object", "either", "and", "or", "not", "get_info_api"}
BOOLEAN_SYNONYMS = {"True": list(words_of("flag_glue", "yes")), "False": list(words_of("flag_glue", "no"))}


_YES_OR_NO = re.compile(rf"_{any_of('flag_glue', 'name_endings')}$")


def flag_synonyms(slot: str, goal_words: set[str], subject_words: set[str] = frozenset()) -> dict[str, list[str]]:
    """What reads a yes/no flag: yes and no, and the feature its name names ("pets_allowed": "pets", "pet";
    "shared_ride": "shared ride", "shared"), and the other words for the same thing (`lexicon/same_things.yaml`:
    "child" of "good_for_kids"), negated for False ("no pets", "without wifi"). The words that only build a
    flag's name ("has", "allowed": `lexicon/flag_glue.yaml`) name no feature, and neither does
    a word of the service's own goals ("ride" of a ride service: asking for one is no shared ride), nor,
    where the name has another word, one the service's other slots are named by (`subject_words`: the
    "attraction" of "free_attraction" beside "attraction_category": any request for attractions says it).

    >>> flag_synonyms("pets_allowed", {"find", "apartment"})["True"]
    ['yes', 'true', 'pets', 'pet', 'animal', 'animals']
    >>> flag_synonyms("shared_ride", {"get", "ride"})["True"], flag_synonyms("has_wifi", set())["False"][2:5]
    (['yes', 'true', 'shared', 'shared ride'], ['no wifi', 'without wifi', 'not wifi'])
    >>> flag_synonyms("free_attraction", {"find", "places"}, {"attraction", "category", "city"})["True"]
    ['yes', 'true', 'free', 'free attraction']
    >>> flag_synonyms("wifi_yes_or_no", set())["True"], flag_synonyms("live_music_flag", set())["True"]
    (['yes', 'true', 'wifi'], ['yes', 'true', 'music'])
    >>> flag_synonyms("kidfriendly", {"find", "attractions"})["True"][2:5], flag_synonyms("is_redeye", set())["True"]
    (['kidfriendly', 'kid friendly', 'child friendly'], ['yes', 'true', 'redeye', 'red eye'])
    """
    asked = _YES_OR_NO.sub("", slot) or slot  # "wifi_yes_or_no" names the wifi, not a yes or a no
    named = [w for w in name_words(asked, apart=False) if w not in word_list("flag_glue")]
    feature = [w for w in named if w not in goal_words]
    feature = [w for w in feature if w not in subject_words] or feature
    forms = [f for w in feature for f in ([w, w[:-1]] if w.endswith("s") and len(w) > 3 else [w])]
    forms += [f for f in dict.fromkeys(o for w in feature for o in same_things(w)) if f not in forms]
    # A word written from two ("kidfriendly", "redeye") is read as the two, each also in its other words
    # ("child friendly"), and as its one part that is no glue alone ("kid", "kids"), not "red" alone.
    apart = [parts for w in feature if len(parts := split_run_together(w)) > 1]
    forms += [f for f in dict.fromkeys(" ".join(p) for parts in apart
                                       for p in product(*[[x, *same_things(x)] for x in parts])) if f not in forms]
    alone = [own[0] for parts in apart if len(own := [x for x in parts if x not in word_list("flag_glue")]) == 1
             and own[0] not in NEGATIONS]
    forms += [f for f in dict.fromkeys(o for w in alone for o in [w, *same_things(w)]) if f not in forms]
    phrase = [p for p in ([" ".join(named)] if len(named) > 1 and feature else []) if p not in forms]
    return {"True": [*BOOLEAN_SYNONYMS["True"], *forms, *phrase],
            # the whole phrase negated too: "no hot tub" must outweigh "hot tub", the longer words winning
            "False": [*BOOLEAN_SYNONYMS["False"], *[f"{no} {f}" for f in [*forms, *phrase] for no in words_of("flag_glue", "negated_by")]]}


def listed_value_words(values: list[str]) -> dict[str, list[str]]:
    """Other words for a choice's values that SGD train's users write in several services ("concert" for
    Music: `values.aliases.words_for`), each only where it stands for one of the listed values and is
    none of them.

    >>> listed_value_words(["Music", "Sports"])
    {'Music': ['concert'], 'Sports': ['game', 'games', 'match']}
    >>> listed_value_words(["Theater", "Film"])
    {}
    """
    learned = {v: words_for(v) for v in values}
    named = {w.lower() for v in values for w in [v, *name_words(v)]}
    claims = Counter(w for words in learned.values() for w in words)
    return {v: kept for v, words in learned.items() if (kept := [w for w in words if claims[w] == 1 and w not in named])}


class ArgumentOverlay(StrictModel):
    description: str | None = None
    question: str | None = None
    normalizer: str | None = None
    values: list[str] | None = None
    synonyms: dict[str, list[str]] | None = None
    examples: list[str] | None = None


class GoalOverlay(StrictModel):
    description: str | None = None
    examples: list[str] | None = None


class Overlay(StrictModel):
    """What a person adds to a generated pack (`domains/<pack>/overlay.yaml`)."""
    description: str | None = None
    max_goals: int | None = Field(None, ge=1, le=3)
    out_of_scope: list[str] | None = None
    lexicon: dict[str, list[str]] | None = None
    goals: dict[str, GoalOverlay] = {}
    arguments: dict[str, ArgumentOverlay] = {}


def _described(kind: str, text: str) -> bool:
    """Whether a slot's description holds a word of the kind (`lexicon/slot_descriptions.yaml`)."""
    return re.search(rf"\b{any_of('slot_descriptions', kind)}\b", text) is not None


def infer_normalizer(slot: SgdSlot) -> str:
    """The normaliser a slot's values are read by (the module docstring's rules, in order)."""
    if slot.type:
        return slot.type
    values = slot.possible_values
    if slot.is_categorical and values:
        if set(values) <= set(BOOLEAN_SYNONYMS):
            return "choice"
        if all(v.isdigit() for v in values):
            return "integer"
        return "choice"
    words = set(slot.name.split("_"))
    text = slot.description.lower()
    if slot.name.startswith("number_of") or "number of" in text or words & {"count", "size"}:
        return "integer"
    if words & word_list("slot_descriptions", "dates") or _described("dates", text):
        return "date" if _described("past", text) else "future_date"
    if "name" in words and _described("people", text) \
            or name_part_of(slot.name) is not None:
        return "person_name"
    if words & {"amount", "price", "fare", "cost", "fee", "balance"} or re.search(r"\b(?:money|amount)\b", text):
        return "amount"
    if words & {"time"} or re.search(r"\btime\b", text) and "date" not in text:
        return "time"
    if "phone" in words or "phone" in text:
        return "phone"
    if "email" in words or "email" in text:
        return "email"
    if "year" in words:
        return "integer"
    return "title_text"


def _check_names(service: SgdService) -> None:
    slots = [s.name for s in service.slots]
    where = service.service_name
    if not NAME.fullmatch(pack_name(service.service_name)):
        raise SgdSchemaError(f"{where}: the service name does not make a pack name (letters, digits and _)")
    for slot in service.slots:
        if not NAME.fullmatch(slot.name) or slot.name in RESERVED:
            raise SgdSchemaError(f"{where}: slot {slot.name!r}: a slot name is lower case letters, digits and _, "
                                 f"and none of {', '.join(sorted(RESERVED))}")
        if slot.type is not None and slot.type not in NORMALIZERS:
            takers = [i.name for i in service.intents if slot.name in [*i.required_slots, *i.optional_slots]]
            raise SgdSchemaError(f"{where}: slot {slot.name!r}{' (intent ' + ', '.join(takers) + ')' if takers else ''}: "
                                 f"unknown type {slot.type!r} (known: {', '.join(sorted(NORMALIZERS))})")
        if slot.is_categorical and not slot.possible_values and slot.type is None:
            raise SgdSchemaError(f"{where}: slot {slot.name!r} is categorical but lists no possible_values")
    made: dict[str, str] = {}
    for intent in service.intents:
        goal = snake(intent.name)
        if not NAME.fullmatch(goal) or goal in RESERVED:
            raise SgdSchemaError(f"{where}: intent {intent.name!r} does not make a goal name ({goal!r})")
        if goal in made:
            raise SgdSchemaError(f"{where}: intents {made[goal]!r} and {intent.name!r} make the same goal {goal!r}")
        made[goal] = intent.name
        for kind, named in (("required", intent.required_slots), ("optional", list(intent.optional_slots)),
                            ("result", intent.result_slots)):
            for slot in named:
                if slot not in slots:
                    raise SgdSchemaError(f"{where}: intent {intent.name}: {kind} slot {slot!r} is not a slot of "
                                         f"the service{closest_hint(slot, slots)}")
        for slot in intent.required_slots:
            if slot in intent.optional_slots:
                raise SgdSchemaError(f"{where}: intent {intent.name}: slot {slot!r} is both required and optional")
    if not service.intents:
        raise SgdSchemaError(f"{where}: the service has no intents")


def apply_overlay(spec: dict, overlay: Overlay, source: Path) -> None:
    for key in ("description", "max_goals", "out_of_scope", "lexicon"):
        if getattr(overlay, key) is not None:
            spec[key] = getattr(overlay, key)
    for name, goal in overlay.goals.items():
        if name not in spec["goals"]:
            raise SgdSchemaError(f"{source}: goals.{name}: no such goal in {spec['name']}"
                                 f"{closest_hint(name, list(spec['goals']))}")
        spec["goals"][name].update(goal.model_dump(exclude_none=True))
    for name, argument in overlay.arguments.items():
        if name not in spec["arguments"]:
            raise SgdSchemaError(f"{source}: arguments.{name}: no such argument in {spec['name']}"
                                 f"{closest_hint(name, list(spec['arguments']))}")
        if argument.normalizer is not None and argument.normalizer not in NORMALIZERS:
            raise SgdSchemaError(f"{source}: arguments.{name}.normalizer: unknown normalizer {argument.normalizer!r} "
                                 f"(known: {', '.join(sorted(NORMALIZERS))})")
        spec["arguments"][name].update(argument.model_dump(exclude_none=True))


def load_overlay(path: Path, model: type[Overlay] = Overlay) -> Overlay | None:
    """The overlay beside a generated pack (`model`: the generator's overlay format), or None."""
    if not path.is_file():
        return None
    try:
        return model.model_validate(yaml.safe_load(path.read_text(encoding="utf-8")) or {})
    except yaml.YAMLError as exc:
        raise SgdSchemaError(f"{path}: invalid YAML: {exc}") from None
    except ValidationError as exc:
        where = "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors())
        raise SgdSchemaError(f"{path}: {where}") from None


def service_pack_spec(service: SgdService, overlay: Overlay | None = None, overlay_path: Path | None = None) -> dict:
    """pack.yaml of one service, as a dict (deterministic: the schema's own order throughout)."""
    _check_names(service)
    name = pack_name(service.service_name)
    slots = {s.name: s for s in service.slots}
    goal_of = {i.name: snake(i.name) for i in service.intents}
    taken = [s for i in service.intents for s in [*i.required_slots, *i.optional_slots]]
    inputs = [s.name for s in service.slots if s.name in taken]
    apis, goals = {}, {}
    for intent in service.intents:
        goal = goal_of[intent.name]
        arguments = [*intent.required_slots, *[s for s in intent.optional_slots if s not in intent.required_slots]]
        apis[goal] = {"arguments": arguments, "produces": f"{goal}_result", "description": intent.description,
                      **({"optional": {s: (None if d == "dontcare" else d) for s, d in intent.optional_slots.items()}}
                         if intent.optional_slots else {}),
                      **({"operation": intent.name} if intent.name != goal else {}),
                      **({"effects": True} if intent.is_transactional else {}),
                      **({"returns": list(intent.result_slots)} if intent.result_slots else {})}
        goals[goal] = {"api": goal, "description": intent.description or intent.name, "examples": []}
    arguments = {}
    for slot_name in inputs:
        slot = slots[slot_name]
        normalizer = infer_normalizer(slot)
        argument: dict = {"description": slot.description or slot_name.replace("_", " "), "normalizer": normalizer}
        if normalizer == "choice":
            argument["values"] = list(slot.possible_values)
            if set(slot.possible_values) <= set(BOOLEAN_SYNONYMS):
                others = {w for other in slots if other != slot_name for w in name_words(other)}
                flags = flag_synonyms(slot_name, {w for i in service.intents for w in name_words(i.name)}, others)
                argument["synonyms"] = {v: flags[v] for v in slot.possible_values}
            elif synonyms := listed_value_words(slot.possible_values):
                argument["synonyms"] = synonyms
        producers = [f"{goal_of[i.name]}_result" for i in service.intents if slot_name in i.result_slots]
        if producers:
            argument["accepts_output"] = producers
        arguments[slot_name] = argument
    spec = {"name": name, "description": service.description, "out_of_scope": [], "goals": goals, "apis": apis,
            "arguments": arguments, "errors": dict(GENERIC_ERRORS)}
    if overlay is not None:
        apply_overlay(spec, overlay, overlay_path or Path("overlay.yaml"))
    return spec


def import_services(schema: Path, out: Path, names: list[str] | None = None) -> dict[str, Path]:
    """Write one validated pack per service (all, or those `names` lists) under the packs root `out`;
    return pack name -> pack.yaml. Every service and its overlay are checked before any pack is written;
    a pack that does not validate is refused, with nothing of it written (the packs before it stay)."""
    services = load_schema(schema)
    if names:
        known = [s.service_name for s in services]
        unknown = [n for n in names if n not in known]
        if unknown:
            raise SgdSchemaError(f"{schema}: no service {unknown[0]!r}{closest_hint(unknown[0], known)}")
        services = [s for s in services if s.service_name in names]
    specs = []
    for service in services:
        overlay_path = pack_paths(out, pack_name(service.service_name))["yaml"].with_name("overlay.yaml")
        specs.append((service, service_pack_spec(service, load_overlay(overlay_path), overlay_path)))
    written: dict[str, Path] = {}
    for service, spec in specs:
        rules, pddl = typed_call_pack_files(spec, GENERATOR)
        header = (f"{spec['name']}: generated by `nesyplan {GENERATOR}` from {Path(schema).name} (service "
                  f"{service.service_name}); edit overlay.yaml beside it, not this file.")
        try:
            written[spec["name"]] = write_validated_pack(out, spec, rules, pddl, header=header)["yaml"]
        except PackNotValid as exc:
            raise SgdSchemaError(f"{service.service_name}: {exc}") from None
    return written
