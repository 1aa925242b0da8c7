"""A later message of a session, translated in the session's context into a delta: values for the slot
asked (or for others: a jump), new values for ones already given (a switch), or nothing (an unrelated turn).

Pre-decision controller: the grammar offers only the arguments of the session's goals, each only with
values the message grounds (the same candidates as an opening request's), and the slot asked first; the
model chooses among them or writes that the message gives nothing. So it cannot invent a value or touch
an argument the state does not have.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import date

from pipeline.language.linking import learned_parts
from pipeline.language.values import link_values
from pipeline.language.names import written_as_name
from pipeline.language.readers import candidate_strings, reader, value_readings
from pipeline.language.words import FUNCTION_WORDS, word_list
from pipeline.llm.grammar import _asp_string, _literal, _naming_words
from pipeline.llm.prompt import goal_arguments
from pipeline.packs.pack import Pack
from pipeline.retrieval.speech_acts import Vocabulary, requests_action
from pipeline.sessions.records import SessionState
from pipeline.values import dates
from pipeline.values.lexicon import alternation
from pipeline.values.normalizers import _stem
from pipeline.values.spans import TOKEN

NO_CHANGE = "% the message gives no value"
ASKED_SLOT_MARGIN = 0.05

# Domain-independent examples (a pet clinic), as the opening's prompt has: they teach the delta's form.
_EXAMPLES = """Facts so far:
_goal(g1, book_visit).
_pet_name(g1, "Biscuit").
Asked: visit_date of g1
Message: next tuesday works, around 10
Changes:
_visit_date(g1, "next tuesday").

Facts so far:
_goal(g1, book_visit).
_pet_name(g1, "Biscuit").
Asked: visit_date of g1
Message: sorry, do you know if parking is free there?
Changes:
% the message gives no value

Facts so far:
_goal(g1, book_visit).
_pet_name(g1, "Biscuit").
_visit_date(g1, "Friday").
Asked: owner_phone of g1
Message: oh wait, it's Max who needs the visit, not Biscuit
Changes:
_pet_name(g1, "Max").
"""


@dataclass
class Delta:
    facts: list[tuple[str, str, str]]  # (goal id, IR predicate without `_`, the user's words)
    prompt: str
    raw: str
    stats: dict


def delta_prompt(pack: Pack, state: SessionState) -> tuple[str, str]:
    """(system, user) of the delta prompt: the task, examples, then the session's facts and question."""
    system = ("You keep the facts of a conversation up to date. Given the facts so far, the question the "
              "agent asked, and the user's message, write the facts the message gives or changes, one per "
              "line, copying the user's words. If the message gives no value, write only: "
              f"{NO_CHANGE}\n\nExamples from another domain:\n\n{_EXAMPLES}")
    asked = f"{state.pending[1]} of {state.pending[0]}" if state.pending else "nothing"
    return system, f"Facts so far:\n{state.ir().rstrip()}\nAsked: {asked}\nMessage: {{message}}\nChanges:"


@dataclass
class Slot:
    """One fact the message may give: for one of `goal_ids`, the IR predicate, one of `values`."""
    goal_ids: list[str]
    predicate: str
    values: list[str]
    optional: bool


def _family(pack: Pack, predicate: str) -> str:
    """What kind of value a predicate takes: dates and periods are one family, names another."""
    return reader(pack.value_spec(predicate).normalizer).family


def takes_any_words(pack: Pack, predicate: str) -> bool:
    """Whether any words could be a value of the predicate (a name, free text): taken only when asked for."""
    return reader(pack.value_spec(predicate).normalizer).free


def _read(pack: Pack, predicate: str, text: str, today: date):
    """What the words read as for a predicate (a day, a period's first and last day, a normalised value),
    or None when its reader cannot read them."""
    spec = pack.value_spec(predicate)
    return reader(spec.normalizer).whole(text, spec, today)


def same_value(pack: Pack, predicate: str, a: str, b: str, today: date) -> bool:
    """Whether two wordings read as the same value of a predicate ("1,200" and "1200.00")."""
    ra, rb = _read(pack, predicate, a, today), _read(pack, predicate, b, today)
    if ra is not None and rb is not None:
        return ra == rb
    return a.strip().lower() == b.strip().lower()


def told_before(pack: Pack, state: SessionState, predicate: str) -> str | None:
    """The words an earlier message gave for a predicate no goal of the session took then ("a visit to
    a dentist in Ukiah": the city, when a provider search joins later), the latest message with
    exactly one reading kept for it; None when none has."""
    if predicate not in pack.spec.arguments:
        return None
    today = date.fromisoformat(state.today)
    for turn in reversed(state.turns):
        readings = link_values(pack, turn.message, value_readings(pack, turn.message, today)).get(predicate)
        kept = {r.value: r.text for r in readings.kept} if readings else {}
        if len(kept) == 1:
            return next(iter(kept.values()))
    return None


def _covers_more(pack: Pack, predicate: str, text: str, today: date) -> bool:
    """Whether a period-like fact's words give more than the one slot asked: several days, a whole name."""
    if reader(pack.spec.ir_extra[predicate].normalizer).ends:
        period = dates.resolve_period(text, today)
        return period is not None and period.start != period.end
    return len(text.split()) > 1


def addressed_slots(pack: Pack, state: SessionState, message: str, today: date) -> list[Slot]:
    """The facts a message may give, decided from the state (pre-decision controller):
    - the slot asked, when the message grounds a value for it (a span that reads as several days gives
      the period-like fact that covers the slot: "from january through march" answers the start date);
    - any other slot of another kind of value the message grounds (a jump, or a switch when the slot has
      a value already); a value equal to the one already given is no change ("820 rather than 780");
    - free text or a name unasked only when the message answers nothing asked, and then only if the
      model takes it; no second slot of the asked slot's kind (one "650" is one value). Where the slot
      head judges the pack's values, free text it keeps for a slot is that slot's, asked or not, beside
      an answer or not, and is written (a whole sentence answers: "a drama directed by Ann Lee").
    A clause that names goals ("make the sales report Q3, the expense one stays Q4") gives values to those
    goals only; elsewhere, when several goals take a slot, the model chooses (the asked goal first)."""
    from pipeline.retrieval.retrievers import get_retriever

    everyone = [g.goal_id for g in state.goals]
    pieces = [(piece, _named_goals(pack, state, piece)) for piece in get_retriever(pack).clauses(message)]
    if len(pieces) < 2 or not any(named for _, named in pieces):
        return _slots_in(pack, state, message, today, everyone, state.pending,
                         _named_goals(pack, state, message))
    slots: list[Slot] = []
    for piece, named in pieces:
        pending = state.pending if state.pending and state.pending[0] in (named or everyone) else None
        for slot in _slots_in(pack, state, piece, today, named or everyone, pending, named):
            if not any(s.predicate == slot.predicate and set(s.goal_ids) & set(slot.goal_ids) for s in slots):
                slots.append(slot)
    return slots


_QUESTION = re.compile(r"\?\s*$")


def asks_back(pack: Pack, text: str) -> bool:
    """A question back to the agent ("do they have parking?"), not a request worded as one ("can I get a
    table at Nopa?", "could you try the one in Dublin?"), whose words may answer what was asked."""
    return _QUESTION.search(text) is not None and not requests_action(text, Vocabulary.of(pack))


SWITCH_WORDS = re.compile(rf"\b{alternation(word_list('switch_cues'))}\b", re.I)
_OLD_VALUE = re.compile(rf"\b{alternation(word_list('switch_cues', 'replaced'))}\s+"
                        rf"(?:{alternation(word_list('switch_cues', 'article'))}\s+)?(?P<old>[^,.;!?]+)", re.I)


def _without_old_values(text: str, candidates: dict[str, list[str]]) -> dict[str, list[str]]:
    """Drop the words a message names as the value it replaces ("the 21st instead of the 20th")."""
    old = [m.group("old").strip().lower() for m in _OLD_VALUE.finditer(text)]
    if not old:
        return candidates
    return {name: [v for v in values if not any(o == v.lower() or o.startswith(v.lower() + " ") for o in old)]
            for name, values in candidates.items()}


def _closest_slot(pack: Pack, text: str, predicates: list[str]) -> str:
    """The slot whose name and description the words are closest to (the packaged sentence embedder);
    the first, the slot asked, by a margin."""
    if len(predicates) < 2:
        return predicates[0]
    from pipeline.retrieval.retrievers import embedding_model

    def described(predicate: str) -> str:
        spec = pack.value_spec(predicate)
        return f"{predicate.replace('_', ' ')}: {spec.description}"

    vectors = embedding_model().encode([text, *map(described, predicates)], normalize_embeddings=True)
    scores = vectors[1:] @ vectors[0]
    scores[0] += ASKED_SLOT_MARGIN  # the message answers the question unless it is clearly about another slot
    return predicates[int(scores.argmax())]


def _bare_answer(text: str, values: list[str]) -> bool:
    """Whether the message is one of the values and nothing more (function words and punctuation aside)."""
    words = {w.lower() for w in TOKEN.findall(text)} - FUNCTION_WORDS
    return bool(words) and any(words <= {w.lower() for w in TOKEN.findall(v)} for v in values)


def _has_value(pack: Pack, given, predicate: str) -> bool:
    """Whether the goal has this predicate's value, or one that gives or is given with it (a full name)."""
    extra = pack.spec.ir_extra.get(predicate)
    related = {predicate, *(extra.gives if extra else [])}
    related |= {name for name, extra in pack.spec.ir_extra.items() if related & set(extra.gives)}
    return any(name in given.values or name in given.normalized for name in related)


def clause_goals(pack: Pack, message: str) -> list[tuple[str, bool]]:
    """The goals a later message's clauses name (retrieval, as for an opening), each with whether its
    clause asks the agent to act: "oh, and pull the P&L for March too" asks for one; a question about the
    business ("do you charge for this?") names one without asking; "no, I meant the sales report" names
    one as a correction. One-goal packs name nothing (the session has their only goal)."""
    from pipeline.retrieval.retrievers import get_retriever
    from pipeline.retrieval.speech_acts import requests_action

    if len(pack.requestable_goals()) < 2:
        return []
    retriever = get_retriever(pack)
    return [(scored.goal, requests_action(scored.source, retriever.speech)) for scored in retriever.by_clause(message)]


def correcting_slot(pack: Pack, state: SessionState, text: str) -> tuple[str, str] | None:
    """The free-text value a no to a read-back corrects, read as if it had been asked: of the read-back's
    values that free words could be (a name, a description), the one whose description the words are
    closest to. None when the read-back has none."""
    if not state.awaiting or not text.strip():
        return None
    choices = []
    for call in state.awaiting:
        for argument, value in call.args.items():
            if isinstance(value, str) and takes_any_words(pack, argument):
                gid = next((g.goal_id for g in state.goals if argument in g.values or argument in g.normalized), None)
                if gid is not None and (gid, argument) not in choices:
                    choices.append((gid, argument))
    if not choices:
        return None
    chosen = _closest_slot(pack, text, [argument for _, argument in choices])
    return next(choice for choice in choices if choice[1] == chosen)


def _named_goals(pack: Pack, state: SessionState, text: str) -> list[str]:
    """The session's goals the words name. A word that names several of them ("report" for a sales and an
    expense report) singles none out where another word does ("the sales report" is the sales one)."""
    stems = {_stem(w) for w in re.findall(r"[a-z&]+", text.lower())}
    naming = {g.goal_id: _naming_words(pack, g.goal) for g in state.goals}
    shared = {w for words in naming.values() for w in words if sum(w in other for other in naming.values()) > 1}
    return ([gid for gid, words in naming.items() if (words - shared) & stems]
            or [gid for gid, words in naming.items() if words & stems])


@dataclass
class _Message:
    """One message (or a clause of one), read once for the slots it may give: the values its words ground
    per predicate (`candidates`), the ones read as the answer to the question asked (`answering`), whether
    the slot head judged them (`heard`), and whether its words change a value already given (`switching`)."""
    pack: Pack
    state: SessionState
    text: str
    today: date
    candidates: dict[str, list[str]]
    answering: dict[str, list[str]]
    heard: bool
    switching: bool

    @classmethod
    def read(cls, pack: Pack, state: SessionState, text: str, today: date,
             pending: tuple[str, str] | None) -> _Message:
        readings = value_readings(pack, text, today)
        # The answer to the question asked is read by the rules where the slot head keeps none of its spans:
        # the question is context the head does not see ("Bourbon Steak" alone). Where it keeps some, a whole
        # sentence answers, and the head tells the value asked from the others it gives ("a drama directed
        # by ..." asked the genre). Everything else is read as a request's words are.
        by_rules = candidate_strings(readings)
        candidates = _without_old_values(text, candidate_strings(link_values(pack, text, readings,
                                                                             asked=pending[1] if pending else None)))
        answering = _without_old_values(text, by_rules) if pending else candidates
        heard = bool(learned_parts(pack)["value"])  # the slot head judged `candidates`
        if pending and heard and candidates.get(pending[1]):
            answering = {**answering, pending[1]: candidates[pending[1]]}
        # Words said to a read-back correct it: a value there changes the one given, cue or not.
        switching = SWITCH_WORDS.search(text) is not None or state.awaiting is not None
        return cls(pack, state, text, today, candidates, answering, heard, switching)

    def goal(self, gid: str):
        return next(g for g in self.state.goals if g.goal_id == gid)

    def fresh(self, gid: str, predicate: str, read: dict[str, list[str]] | None = None) -> list[str]:
        """The values read for a goal's predicate that differ from the one it has."""
        current = self.goal(gid).values.get(predicate)
        return [v for v in (self.candidates if read is None else read).get(predicate, [])
                if current is None or not same_value(self.pack, predicate, v, current, self.today)]

    def other_arguments(self, gid: str, predicate: str) -> list[str]:
        return [p.removeprefix("_") for p in goal_arguments(self.pack, self.goal(gid).goal)
                if p.removeprefix("_") != predicate]


def _slots_in(pack: Pack, state: SessionState, text: str, today: date, targets: list[str],
              pending: tuple[str, str] | None, named: list[str]) -> list[Slot]:
    """The slots words give, for the goals `targets` (see `addressed_slots`): the answer to the question
    asked first, then each other argument of the goals the words may fill unasked."""
    message = _Message.read(pack, state, text, today, pending)
    asked = pending if pending and any(g.goal_id == pending[0] for g in state.goals) else None
    slots = _answer_slots(message, *asked) if asked else []
    taken = {_family(pack, asked[1])} if asked else set()
    answered = bool(slots)
    for predicate, goal_ids in _open_arguments(message, targets).items():
        family, free = _family(pack, predicate), takes_any_words(pack, predicate)
        if any(s.predicate == predicate for s in slots) or family in taken and not (message.heard and free):
            continue  # free words the slot head gives another slot than the one asked are read below
        if free and (state.awaiting is not None or asks_back(pack, text)):
            continue  # free words said to a read-back correct only the value a no points at (correcting_slot)
        slot = (_beside_an_answer(message, predicate, goal_ids, slots) if free and answered
                else _unasked(message, predicate, goal_ids, named, asked[0] if asked else None))
        if slot is not None:
            slots.append(slot)
    return slots


def _answer_slots(message: _Message, gid: str, asked: str) -> list[Slot]:
    """The slots the answer to the question asked gives: the period-like fact that covers the slot asked
    ("from january through march" answers a start date with the period), else the slot asked, or another
    free slot the words are closer to."""
    pack = message.pack
    covering = [name for name, extra in pack.spec.ir_extra.items() if asked in extra.gives
                and f"_{name}" in goal_arguments(pack, message.goal(gid).goal)]
    for predicate in covering:
        values = [v for v in message.fresh(gid, predicate, message.answering)
                  if _covers_more(pack, predicate, v, message.today)]
        if values:
            return [Slot([gid], predicate, values, optional=False)]
    values = message.fresh(gid, asked, message.answering)
    free = takes_any_words(pack, asked)
    if not values and not free and _read(pack, asked, message.text, message.today) is not None:
        values = [message.text.strip()]  # no span reads, the whole answer does ("half past four, please")
    if free and asks_back(pack, message.text):
        values = []  # a question back ("do they have parking?") names nobody and nothing
    slots: list[Slot] = []
    if values and free and _bare_answer(message.text, values):
        free = False  # nothing but a value ("The Oak Room"): it answers the question asked
    elif values and free and message.heard:
        # The slot head tells the answer from other slots' values: words it keeps for another slot and not
        # for the one asked ("find restaurants in San Jose" asked the restaurant's name) are that slot's,
        # read by the caller.
        if not message.candidates.get(asked) and any(message.candidates.get(p)
                                                     for p in message.other_arguments(gid, asked)):
            values = []
    elif values and free:
        # Free words may answer the question or fill another free slot ("put it under Maya Kim" asked for
        # the restaurant): the slot whose description the message is closest to.
        free_others = [p for p in message.other_arguments(gid, asked) if takes_any_words(pack, p)
                       and message.fresh(gid, p) and not _has_value(pack, message.goal(gid), p)]
        chosen = _closest_slot(pack, message.text, [asked, *free_others])
        if chosen != asked:
            slots.append(Slot([gid], chosen, message.fresh(gid, chosen), optional=True))
            values = []
    if values:  # the head's answer is written, as an opening's kept values are
        slots.append(Slot([gid], asked, values,
                          optional=free and not (message.heard and message.candidates.get(asked))))
    return slots


def _open_arguments(message: _Message, targets: list[str]) -> dict[str, list[str]]:
    """Each argument of the goals `targets` that words may fill, with the goals that take it; an argument
    that takes another call's output takes no words."""
    by_predicate: dict[str, list[str]] = {}
    for gid in targets:
        goal = message.goal(gid)
        for predicate in (a.removeprefix("_") for a in goal_arguments(message.pack, goal.goal)):
            if predicate not in goal.refs:
                by_predicate.setdefault(predicate, []).append(gid)
    return by_predicate


def _beside_an_answer(message: _Message, predicate: str, goal_ids: list[str], slots: list[Slot]) -> Slot | None:
    """Free words beside an answer are context, unless the slot head keeps them as this slot's (it was
    trained on such turns: "a drama directed by ..."), and then they are written, as an opening's kept
    values are; without the head, only a person's whole name written as one is taken unasked ("14 of us,
    put it under Ana Ruiz"), and then it is written. Words of the answer are never another slot's."""
    pack = message.pack
    answer = {w.lower() for slot in slots for v in slot.values for w in TOKEN.findall(v)}
    family = _family(pack, predicate)
    if message.heard and family != "person_name":
        goal_ids = [gid for gid in goal_ids if not _has_value(pack, message.goal(gid), predicate)]
        values = [v for v in dict.fromkeys(v for gid in goal_ids for v in message.fresh(gid, predicate))
                  if not {w.lower() for w in TOKEN.findall(v)} & answer]
        return Slot(goal_ids, predicate, values, optional=False) if values else None
    if family != "person_name" or any(predicate in extra.gives for extra in pack.spec.ir_extra.values()):
        return None  # a part of a name ("Ruiz") is never one written whole
    named_values = {gid: [v for v in message.fresh(gid, predicate) if written_as_name(v)
                          and not {w.lower() for w in TOKEN.findall(v)} & answer] for gid in goal_ids}
    goal_ids = [gid for gid in goal_ids if named_values[gid] and not _has_value(pack, message.goal(gid), predicate)]
    return Slot(goal_ids, predicate, named_values[goal_ids[0]], optional=False) if goal_ids else None


def _unasked(message: _Message, predicate: str, goal_ids: list[str], named: list[str],
             asked_goal: str | None) -> Slot | None:
    """A value the message gives unasked where it answers nothing: it fills an empty slot, and changes a
    given one only with a switch cue ("actually", "instead": "is it going to rain today?" moves no report
    to today). Free text ("it's for the tile job") is the model's to take, unless the slot head kept it."""
    pack = message.pack
    if _family(pack, predicate) == "date" and predicate not in pack.spec.ir_extra and any(
            predicate in extra.gives for extra in pack.spec.ir_extra.values()):
        return None  # a start or end date alone is given only when asked; a new period comes whole
    if not message.switching:
        goal_ids = [gid for gid in goal_ids if not _has_value(pack, message.goal(gid), predicate)]
    goal_ids = sorted(goal_ids, key=lambda gid: (gid not in named, gid != asked_goal))
    values = list(dict.fromkeys(v for gid in goal_ids for v in message.fresh(gid, predicate)))
    if not values:
        return None
    return Slot(goal_ids, predicate, values, optional=takes_any_words(pack, predicate) and not message.heard)


def delta_grammar(pack: Pack, state: SessionState, message: str, today: date) -> str | None:
    """EBNF of the deltas this message may give; None when it gives nothing the state can take."""
    slots = addressed_slots(pack, state, message, today)
    if not slots:
        return None
    rules, parts = [], []
    for i, slot in enumerate(slots):
        heads = " | ".join(_literal(f"_{slot.predicate}({gid}, ") for gid in slot.goal_ids)
        values = " | ".join(_literal(_asp_string(v)) for v in slot.values)
        rules.append(f"s{i} ::= ({heads}) ({values}) {_literal(').' + chr(10))}")
        parts.append(f"(s{i})?" if slot.optional else f"s{i}")
    body = " ".join(parts)
    if all(slot.optional for slot in slots):
        body = f"{_literal(NO_CHANGE + chr(10))} | {body}"
    return "\n".join([f"root ::= {body}", *rules]) + "\n"


def translate_delta(pack: Pack, state: SessionState, message: str, backend) -> Delta:
    """The facts a message gives, by the backend under the delta grammar (no call when nothing is grounded)."""
    system, user = delta_prompt(pack, state)
    user = user.replace("{message}", message.strip())
    grammar = delta_grammar(pack, state, message, date.fromisoformat(state.today))
    if grammar is None:
        return Delta(facts=[], prompt=system + "\n" + user, raw=NO_CHANGE + "\n", stats={"new_tokens": 0})
    completion = backend.complete(system, user, grammar, max_new_tokens=120)
    return Delta(facts=parse_delta(completion.text), prompt=system + "\n" + user, raw=completion.text,
                 stats={**completion.stats, "new_tokens": completion.new_tokens, "llm_s": completion.seconds})


def parse_delta(text: str) -> list[tuple[str, str, str]]:
    """The facts of a delta the grammar allowed: `_pred(gK, "words").` lines (the last of one wins)."""
    facts: dict[tuple[str, str], str] = {}
    for line in text.splitlines():
        line = line.strip()
        if not line.startswith("_") or "(" not in line or not line.endswith(")."):
            continue
        predicate, rest = line[1:].split("(", 1)
        gid, value = rest[:-2].split(", ", 1)
        facts[(gid, predicate)] = json.loads(value)  # an ASP string is a JSON string for what we write
    return [(gid, predicate, value) for (gid, predicate), value in facts.items()]
