"""Training examples for the learned heads, read from SGD train and its re-worded schemas (SGD-X).

A user turn of SGD says which intent it starts (an INFORM_INTENT act) and where each slot's value is in
its words (`slots`: character spans; a categorical value is found where the turn writes it). Each turn
is paired with the words of a goal or an argument, in one of the schema's wordings (the original or an
SGD-X variant, drawn at random, so no name's exact words are what is learned):

- goal pairs: the turn and the intent it starts (1); the service's other intents, and intents of services
  of other domains (0: what a pack must refuse); a turn that starts nothing and its service's active
  intent (0: an answer is no new request);
- slot pairs: a value's span and its slot (1); the same span and another slot of the service (0: which
  argument a value is); spans that are no value, with a slot (0: what must not be invented).
"""

from __future__ import annotations

import gzip
import json
import random
import re
from dataclasses import dataclass, field
from pathlib import Path

from pipeline.language.descriptions import argument_text, goal_text
from pipeline.language.words import FUNCTION_WORDS
from pipeline.packs.sgd_schema import SgdService, load_schema
from pipeline.values.normalizers import _stem
from pipeline.values.numbers import NUMBER_WORDS

_NUMBER_WORDS = {i: w for w, i in NUMBER_WORDS.items() if i <= 12}  # the counts SGD writes as words
_NUMBERS = frozenset(_NUMBER_WORDS.values())
_TOKEN = re.compile(r"[^\W_]+(?:['’][a-z]+)?")


VARIANTS = ("v1", "v2", "v3", "v4", "v5")


def dialogues_of(folder: Path, limit: int | None):
    """The dialogues of an SGD split's files (plain or gzipped), the first `limit` of them."""
    files = sorted([*folder.glob("dialogues_*.json"), *folder.glob("dialogues_*.json.gz")])
    if not files:
        raise FileNotFoundError(f"no dialogues_*.json[.gz] in {folder}")
    count = 0
    for file in files:
        with (gzip.open if file.suffix == ".gz" else open)(file, "rt", encoding="utf-8") as handle:
            for dialogue in json.load(handle):
                if limit is not None and count >= limit:
                    return
                count += 1
                yield dialogue


def schemas_of(train: Path) -> list[Path]:
    """The train schema, then each SGD-X re-wording of it found beside the split (`../sgd_x/vK/`)."""
    found = [train / "schema.json"]
    found += [p for v in VARIANTS if (p := train.parent / "sgd_x" / v / "train.schema.json").is_file()]
    return found


@dataclass
class Turn:
    text: str
    service: str
    starts: str | None  # the intent it starts
    active: str | None  # the intent active after it
    spans: list[tuple[int, int, str]] = field(default_factory=list)  # (start, end, slot)
    informed: frozenset[str] = frozenset()  # the slots it gives a value, written or not


@dataclass
class Wordings:
    """Per service, its goal and argument texts in each wording (original first), names mapped by position."""
    goals: dict[str, list[dict[str, str]]]  # service -> [intent (original name) -> text, one per wording]
    slots: dict[str, list[dict[str, str]]]


def read_wordings(schemas: list[Path]) -> Wordings:
    """The first schema is the original; the others re-word the same services, slots and intents in order."""
    loaded = [load_schema(p) for p in schemas]
    goals: dict[str, list[dict[str, str]]] = {}
    slots: dict[str, list[dict[str, str]]] = {}
    for services in loaded:
        for original, service in zip(loaded[0], services):
            intent_texts, slot_texts = {}, {}
            for a, b in zip(original.intents, service.intents):
                intent_texts[a.name] = goal_text(b.name, b.description, [*b.required_slots, *b.optional_slots])
            for a, b in zip(original.slots, service.slots):
                slot_texts[a.name] = argument_text(b.name, b.description)
            goals.setdefault(original.service_name, []).append(intent_texts)
            slots.setdefault(original.service_name, []).append(slot_texts)
    return Wordings(goals, slots)


def _as_word(form: str) -> re.Pattern:
    """The words of a value written whole, not inside another word."""
    return re.compile(r"(?<!\w)" + re.escape(form) + r"(?!\w)", re.IGNORECASE)


def _categorical_spans(text: str, frame: dict, service: SgdService) -> list[tuple[int, int, str]]:
    categorical = {s.name for s in service.slots if s.is_categorical}
    found = []
    for action in frame["actions"]:
        if action["act"] != "INFORM" or action["slot"] not in categorical or not action["values"]:
            continue
        value = action["values"][0]
        forms = [value] + ([_NUMBER_WORDS[int(value)]] if value.isdigit() and int(value) in _NUMBER_WORDS else [])
        for form in forms:
            written = list(_as_word(form).finditer(text))
            if len(written) == 1:  # twice ("one way for one"): which one is the value is not known
                found.append((written[0].start(), written[0].end(), action["slot"]))
                break
            if written:
                break
    return found


def user_frames(dialogue: dict, services: dict[str, SgdService]):
    """(turn, frame, service) for each user turn's frame of a service the schema has."""
    for turn in dialogue["turns"]:
        if turn["speaker"] != "USER":
            continue
        for frame in turn["frames"]:
            service = services.get(frame["service"])
            if service is not None:
                yield turn, frame, service


def read_turns(dialogues, services: dict[str, SgdService], answers_per_dialogue: int = 1,
               seed: int = 0) -> list[Turn]:
    """Every user turn that starts an intent, and up to `answers_per_dialogue` others that give values."""
    rng = random.Random(seed)
    turns: list[Turn] = []
    for dialogue in dialogues:
        others = []
        for turn, frame, service in user_frames(dialogue, services):
            starts = next((a["values"][0] for a in frame["actions"] if a["act"] == "INFORM_INTENT"
                           and a["values"]), None)
            active = frame.get("state", {}).get("active_intent")
            spans = [(s["start"], s["exclusive_end"], s["slot"]) for s in frame.get("slots", [])]
            spans += _categorical_spans(turn["utterance"], frame, service)
            informed = frozenset(a["slot"] for a in frame["actions"] if a["act"] == "INFORM")
            item = Turn(turn["utterance"], frame["service"], starts, None if active == "NONE" else active, spans,
                        informed)
            (turns if starts else others).append(item)
        givers = [t for t in others if t.spans]
        turns += rng.sample(givers, min(answers_per_dialogue, len(givers)))
    return turns


@dataclass
class GoalPair:
    turn: int  # index into the turns
    text: str  # the goal's words
    label: int


@dataclass
class SlotPair:
    turn: int
    start: int
    end: int
    text: str  # the argument's words
    label: int


def domain(service: str) -> str:
    """An SGD service's domain: its name before `_` (Hotels_2 -> Hotels)."""
    return service.split("_")[0]


def goal_pairs(turns: list[Turn], wordings: Wordings, foreign: int = 3, seed: int = 0) -> list[GoalPair]:
    rng = random.Random(seed)
    names = sorted(wordings.goals)
    pairs = []
    for i, turn in enumerate(turns):
        texts = rng.choice(wordings.goals[turn.service])
        if turn.starts:
            pairs.append(GoalPair(i, texts[turn.starts], 1))
            pairs += [GoalPair(i, t, 0) for intent, t in texts.items() if intent != turn.starts]
            strangers = [s for s in names if domain(s) != domain(turn.service)]
            for stranger in rng.sample(strangers, min(foreign, len(strangers))):
                pairs.append(GoalPair(i, rng.choice(list(rng.choice(wordings.goals[stranger]).values())), 0))
        elif turn.active in texts:
            pairs.append(GoalPair(i, texts[turn.active], 0))
    return pairs


def slot_pairs(turns: list[Turn], wordings: Wordings, other_slots: int = 2, non_values: int = 3,
               seed: int = 0) -> list[SlotPair]:
    rng = random.Random(seed)
    pairs = []
    for i, turn in enumerate(turns):
        texts = rng.choice(wordings.slots[turn.service])
        slot_names = list(texts)
        for start, end, slot in turn.spans:
            if slot not in texts:
                continue
            pairs.append(SlotPair(i, start, end, texts[slot], 1))
            wrong = [s for s in slot_names if s != slot]
            for other in rng.sample(wrong, min(other_slots, len(wrong))):
                pairs.append(SlotPair(i, start, end, texts[other], 0))
        # Words that are no value: runs of one to four tokens outside every value, numbers first.
        taken = [(a, b) for a, b, _ in turn.spans]
        tokens = [m for m in _TOKEN.finditer(turn.text) if not any(a < m.end() and m.start() < b for a, b in taken)]
        if not tokens:
            continue
        numbers = [m for m in tokens if any(c.isdigit() for c in m.group()) or m.group().lower() in _NUMBERS]
        picks = [(m.start(), m.end()) for m in numbers]
        while len(picks) < non_values + len(numbers):
            k = rng.randrange(len(tokens))
            run = tokens[k:k + rng.randint(1, 4)]
            if any(a < run[-1].end() and run[0].start() < b for a, b in taken):
                continue
            picks.append((run[0].start(), run[-1].end()))
        for start, end in picks:
            pairs.append(SlotPair(i, start, end, texts[rng.choice(slot_names)], 0))
    return pairs


def read_aliases(dialogues, services: dict[str, SgdService], min_services: int = 3, min_count: int = 2,
                 agreement: float = 0.9) -> dict[str, str]:
    """Other names of a value that SGD's annotations resolve the same way in at least `min_services`
    services ("sf" -> San Francisco, "seattle, wa" -> Seattle): each INFORM of a free slot whose words
    differ from its canonical value counts for that pair. A pair that holds across services is about
    the value (a place), not one service's catalogue ("burgers" is one restaurant service's Steakhouse).
    Words with a digit are left out: dates, times and counts have readers of their own; so is a name its
    value begins with ("washington" of "Washington D.C."): as written it already names that value, and
    services differ on what they add to it."""
    counts: dict[str, dict[str, int]] = {}
    where: dict[tuple[str, str], set[str]] = {}
    for dialogue in dialogues:
        for _turn, frame, service in user_frames(dialogue, services):
            free = {s.name for s in service.slots if not s.is_categorical}
            for action in frame["actions"]:
                if action["act"] != "INFORM" or action["slot"] not in free or not action["values"] \
                        or not action["canonical_values"]:
                    continue
                said, canonical = action["values"][0].strip().lower(), action["canonical_values"][0]
                if any(c.isdigit() for c in said + canonical) or said == canonical.lower() or canonical == "dontcare":
                    continue
                counts.setdefault(said, {})
                counts[said][canonical] = counts[said].get(canonical, 0) + 1
                where.setdefault((said, canonical), set()).add(frame["service"])
    out = {}
    for said, by_value in counts.items():
        canonical, n = max(by_value.items(), key=lambda kv: kv[1])
        begins = canonical.lower().split()[:len(said.split())] == said.split()
        if n >= min_count and n / sum(by_value.values()) >= agreement and len(where[(said, canonical)]) >= min_services \
                and not begins:
            out[said] = canonical
    return dict(sorted(out.items()))


def _listed_words(slot) -> bool:
    """A categorical slot whose values are words (not yes/no, not counts)."""
    values = [v for v in slot.possible_values if v != "dontcare"]
    return slot.is_categorical and bool(values) and not all(v.isdigit() for v in values) \
        and not set(values) <= {"True", "False"}


def read_value_words(dialogues, services: dict[str, SgdService], min_services: int = 2, min_count: int = 5,
                     agreement: float = 0.9) -> dict[str, list[str]]:
    """Other words for a listed value, as SGD train's users write it ("concert" for Music, "large" for
    Full-size): a word of the turns that give a categorical slot a value without writing it, that comes
    with that value in at least `agreement` of the turns giving the slot a value in its words, in at least
    `min_services` services and `min_count` turns in all. What holds across services is about the value,
    not one service's catalogue. Words are compared by their stem; each is written in the forms such
    turns wrote it in at least twice ("game", "games"). Returns value (lower case) -> words."""
    given: dict[tuple[str, str, str], int] = {}  # (service, slot, stem) -> turns giving the slot a value
    unwritten: dict[tuple[str, str, str, str], int] = {}  # the same, with the value, where it is not written
    forms: dict[tuple[str, str], dict[str, int]] = {}  # (stem, value) -> the words written for it
    for dialogue in dialogues:
        for turn, frame, service in user_frames(dialogue, services):
            slots = {s.name: s for s in service.slots}
            tokens = {w for w in re.findall(r"[a-z]+", turn["utterance"].lower()) if w not in FUNCTION_WORDS}
            stems = {_stem(w) for w in tokens}
            for action in frame["actions"]:
                slot = slots.get(action["slot"])
                if action["act"] != "INFORM" or slot is None or not _listed_words(slot) or not action["values"] \
                        or action["values"][0] == "dontcare":
                    continue
                value = action["values"][0]
                written = _as_word(value).search(turn["utterance"])
                for stem in stems:
                    key = (frame["service"], slot.name, stem)
                    given[key] = given.get(key, 0) + 1
                    if not written:
                        unwritten[(*key, value.lower())] = unwritten.get((*key, value.lower()), 0) + 1
                if not written:
                    for w in tokens:
                        seen = forms.setdefault((_stem(w), value.lower()), {})
                        seen[w] = seen.get(w, 0) + 1
    count: dict[tuple[str, str], int] = {}
    where: dict[tuple[str, str], set[str]] = {}
    for (service, slot, stem, value), n in unwritten.items():
        if n / given[(service, slot, stem)] >= agreement and stem not in _stem(value):
            count[(stem, value)] = count.get((stem, value), 0) + n
            where.setdefault((stem, value), set()).add(service)
    out: dict[str, list[str]] = {}
    for (stem, value), n in sorted(count.items()):
        if n >= min_count and len(where[(stem, value)]) >= min_services:
            out.setdefault(value, []).extend(sorted(w for w, k in forms[(stem, value)].items() if k >= 2))
    return out
