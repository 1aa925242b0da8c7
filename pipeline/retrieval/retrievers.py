"""Goal retrieval (ProTIP): which of a pack's goals a request asks for, before the LLM fills arguments.

Each goal is represented by its name, description, argument names and the pack's own example requests,
embedded with the packaged sentence model (all-MiniLM-L6-v2, offline). Progressive retrieval takes the best
goal, subtracts that goal's embedding from the request's (what the goal explains), and retrieves again
until nothing scores above the threshold; the result is an ordered shortlist with scores.
"""

from __future__ import annotations

import calendar
import difflib
import re
import threading
from collections.abc import Callable
from datetime import date
from functools import cached_property, lru_cache
from pathlib import Path

import numpy as np

from pipeline.language.encoder import embedding_model, packaged_embedding_model  # noqa: F401 (re-exported)
from pipeline.language.names import names_a_person
from pipeline.language.openings import counted_noun, opening_word
from pipeline.language.words import FUNCTION_WORDS, PERSON_NOUNS, says_its_own, word_list
from pipeline.language.picks import content_stems, picks_said, resources_named, stems
from pipeline.language.readers import QUOTED
from pipeline.language.roles import RolePhrase, role_phrase
from pipeline.packs.pack import Pack
from pipeline.packs.rest import (identified, last_noun, path_identifiers, singular, snake_words,
                                 words_after_the_identifier)
from pipeline.records import ClauseAnalysis
from pipeline.retrieval.clause_walk import ClauseWalk
from pipeline.retrieval.lookups import current_ones, holders, lookup_goals, preferred
from pipeline.retrieval.scored import ScoredGoal
from pipeline.retrieval.speech_acts import (
    QUESTION_OPENERS, REQUEST_VERBS, Vocabulary, classify, imperative_verb,
    object_words, picks_one, question_kind, without_topic, words,
)
from pipeline.settings import settings
from pipeline.values.normalizers import CONTACT, WEB_ADDRESS, _stem, web_address_spans
from pipeline.values.lexicon import alternation, any_of, words_of
from pipeline.values.spans import without_values

_SEARCH_WORDS = re.compile(r"\b(?:" + "|".join(re.escape(w).replace(r"\ ", r"\s+") for w in
                                               sorted(word_list("search_words"), key=len, reverse=True)) + r")\b",
                           re.IGNORECASE)
_ASKING_WHAT = re.compile(r"(?:^|(?<=[.!?]))\s*(?:" + "|".join(re.escape(w) for w in sorted(word_list(
    "search_words", "asking_what"), key=len, reverse=True)) + r")\b[^.!?]*\?", re.IGNORECASE)


def asks_what(text: str) -> bool:
    """Whether a sentence of the text asks what there is: it opens with "what" or "which" and ends with a
    question mark (`lexicon/search_words.yaml`, `asking_what`).

    >>> asks_what("Which parcels have I sent?"), asks_what("Hi. What rooms are free in May?")
    (True, True)
    >>> asks_what("What a day. Book me a table."), asks_what("I want to know what it costs"), asks_what("Somewhat?")
    (False, False, False)
    """
    return bool(_ASKING_WHAT.search(text))

# Cosine thresholds of the packaged model: below FIRST nothing in the pack covers the request; a further
# goal must score NEXT on what the earlier goals left unexplained (a residual: its scores run lower).
FIRST_THRESHOLD = 0.30
NEXT_THRESHOLD = 0.25
# The first threshold of a pack with no example requests (made from a schema): a request matches lines of
# description less closely than other requests. Chosen on one fold of SGD train's leave-domains-out
# cross-validation (`eval-sgd-cv`, its held-out domains' openings and other domains' probes: the lowest
# value that still refused 95% of the probes), then checked on the two others (docs/design/retrieval.md).
DESCRIBED_FIRST_THRESHOLD = 0.26
# A clause that asks only by being a bare noun phrase ("not sure of the amount yet") names a goal only above this.
BARE_PHRASE_THRESHOLD = 0.45
MAX_GOALS = 3
# At most this many of a REST call's answer fields describe it to retrieval. Measured on the one-call requests
# of eval-openapi's six specs and RestBench TMDB (best goal for the words): 119 -> 125 of 208 with a document
# of these words beside each operation's own.
DESCRIBED_ANSWERS = 12
# A word rarer than this in English and not the pack's own is read as a misspelling of the pack word it is
# closest to ("expnse" is "expense"), if one is close enough.
MISSPELLING_ZIPF = 2.0
MISSPELLING_CUTOFF = 0.8
# For a pack made from a schema: goals whose retrieval scores for the chosen goal's words are within NEAR_TIE of
# its score are a near-tie, which the goal head breaks when it gives one of them HEAD_MARGIN more probability
# than the chosen goal (`Retriever._the_head_breaks_a_tie`).
NEAR_TIE = 0.10
HEAD_MARGIN = 0.5


_LIGHT_VERBS = word_list("light_verbs")
PICK_QUALIFIERS = word_list("pick_qualifiers")  # "the *most* popular": a pick qualified, nothing more asked
# Verbs that name no deed of their own ("show", "find", "add", "delete"): whatever API is asked, its object says
# what for; any other verb a request opens with is a deed the API must document (`deed_not_done`).
GENERAL_VERBS = word_list("general_verbs") | {w for action in ("search", "read", "list", "create", "update", "delete")
                                              for w in word_list("operation_words", action)}
CHANGE_VERBS = word_list("change_verbs")  # "book a visit": the API's if a visit is one of its things


VERB_RANKS = 5  # how far down a clause's ranking another call for its words (a role's, a list's) is looked for
_CHANGES = ("create", "update", "delete")


def verb_action(words: str) -> str | None:
    """The change a request's words ask for by their verb (`lexicon/operation_words.yaml`, a word or its
    inflection: "added", "removing"), when they name exactly one kind of change; else None.

    >>> verb_action("please add a new customer"), verb_action("delete order 12"), verb_action("show me order 12")
    ('create', 'delete', None)
    """
    tokens = {t.lower() for t in re.findall(r"[A-Za-z]+", words)}
    named = {action for action in _CHANGES if tokens & _VERB_FORMS[action]}
    return named.pop() if len(named) == 1 else None


def _inflections(word: str) -> set[str]:
    return {word, word + "s", word + "d", word + "ed", word + "ing", word.rstrip("e") + "ing"}


# Each kind of call's verbs (`lexicon/operation_words.yaml`) with their inflections, made once: they are
# looked up for every clause judged.
_VERB_FORMS = {action: frozenset(f for w in word_list("operation_words", action) for f in _inflections(w))
               for action in (*_CHANGES, "read", "search", "list")}
_READS = ("read", "list", "search")


def _name_stems(goal: str) -> set[str]:
    """The stems of the words of an operation's name (`post_payment_id_charge`: "charg", ...)."""
    return {_stem(w) for w in goal.lower().split("_") if w}


def asked_action(words: str) -> tuple[str | None, bool]:
    """The kind of call the words ask for, and whether their opening says it (the verb or the question they
    open with, `openings.opening_word`; a phrasal verb of two words, "set up", before its first word) rather
    than a word of a change somewhere in them (`verb_action`). An opening verb of a change names that change
    ("rename folder 4"); one of reading (`operation_words` read and search: "pull up invoice 12") or a
    question ("is room 5 free?") asks for a read, unless it names a change ("can we delete it?").

    >>> asked_action("rename folder 4 to Drafts"), asked_action("pull up invoice 12"), asked_action("is room 5 free?")
    (('update', True), ('read', True), ('read', True))
    >>> asked_action("could we delete note 5?"), asked_action("a new customer, add him"), asked_action("note 5")
    (('delete', True), ('create', False), (None, False))
    >>> asked_action("set up a mailbox"), asked_action("get me registered")  # a phrasal verb; a participle's deed
    (('create', True), ('create', False))
    >>> asked_action("which routes do we have set up?"), asked_action("how many notes were deleted")
    (('read', True), ('read', True))
    """
    opening, after = opening_word(words)
    if opening is not None:
        for action in (*_CHANGES, "read", "search"):
            if f"{opening} {after}" in word_list("operation_words", action) or opening in _VERB_FORMS[action]:
                if action in ("read", "search") and after.endswith("ed"):
                    break  # "get me onboarded": the deed is the participle's
                return ("read" if action == "search" else action), True
        if opening in _ASKING_WHAT_WORDS or f"{opening} {after}" in _HOW_MUCH:
            return "read", True  # "which routes do we have set up?": a change's word tells of the things asked
        if opening in QUESTION_OPENERS:
            return verb_action(words) or "read", True
    return verb_action(words), False


# A request opening with "what", "which" or "how many" (`speech_acts.yaml`, how_much) asks what there is,
# whatever word of a change it holds: of the request corpus's one-call requests so opening whose words hold one ("set up", "created",
# "registered"), 9 of 9 (8 APIs) need a read; SGD's say so too (`lexicon/search_words.yaml`, asking_what).
_ASKING_WHAT_WORDS = word_list("search_words", "asking_what")
_HOW_MUCH = word_list("speech_acts", "how_much")


def _says_its_verb(goal: str, words: str) -> bool:
    """Whether the words say the verb a goal's name begins with ("book" of book_lesson, "booking" too); after
    a light verb, the noun that says the deed ("payment" of make_payment: "make a transfer" says another).

    >>> _says_its_verb("book_lesson", "I want to book a lesson"), _says_its_verb("book_lesson", "a lesson please")
    (True, False)
    >>> _says_its_verb("make_payment", "make a transfer"), _says_its_verb("make_payment", "make a payment")
    (False, True)
    """
    parts = goal.split("_")
    verb = next((p for p in parts if p not in _LIGHT_VERBS and p not in ("a", "an", "the")), parts[0])
    return bool(re.search(rf"\b{re.escape(verb)}", words, re.IGNORECASE))


def goal_documents(pack: Pack, exclude: frozenset[str] = frozenset()) -> list[tuple[str, str]]:
    """(goal, text) pairs: a summary of each goal (name, description, argument names), and each of its
    example requests not in `exclude` (held out when training is measured). A pack with no example requests
    (made from a schema) also has each goal's summary with the pack's own description: one line of a goal
    ("reserve the chosen table") says less of the requests it serves than the service's line does ("finds
    restaurants and books tables at them"). A REST operation also has its summary with what its answer holds
    ("Get Credits ... Answers with cast, crew"): a request asks for what it wants back."""
    docs = []
    described_only = not pack.has_examples()
    for name in pack.requestable_goals():
        goal = pack.spec.goals[name]
        summary = f"{name.replace('_', ' ')}: {goal.description}"
        args = ", ".join(a.replace("_", " ") for a in pack.goal_takes(name))
        docs.append((name, summary + (f" ({args})" if args else "")))
        if described_only and pack.spec.description:  # what the whole service is for says what its goals are about
            docs.append((name, f"{summary}. {pack.spec.description}"))
        rest = pack.spec.apis[goal.api].rest
        if rest is not None and rest.answers:  # what a REST call answers with ("cast, crew") says what it is for
            described = rest.answers[:DESCRIBED_ANSWERS]
            docs.append((name, f"{summary}. Answers with {', '.join(a.replace('_', ' ') for a in described)}"))
        docs += [(name, example) for example in goal.examples if example not in exclude]
    return docs


class Retriever:
    """Ranks a pack's goals for a request. A goal scores as its best-matching document. Scores are on
    one scale for every method (about 0..1), so the thresholds mean the same thing for each.

    Subclasses define a query state (what is still unexplained), its scores, and what taking a goal
    removes from it (ProTIP's subtraction)."""

    method = ""
    first_threshold = FIRST_THRESHOLD
    next_threshold = NEXT_THRESHOLD

    def __init__(self, pack: Pack, exclude: frozenset[str] = frozenset()):
        self.pack = pack
        if not pack.has_examples() and not pack.is_rest_api:  # calibrated on service schemas, not on OpenAPI specs
            self.first_threshold = DESCRIBED_FIRST_THRESHOLD
        docs = goal_documents(pack, exclude)
        self.goals = pack.requestable_goals()
        self.doc_goals = [g for g, _ in docs]
        self.doc_texts = [t for _, t in docs]
        self._goal_of_doc = np.array([self.goals.index(g) for g in self.doc_goals])
        self._known = frozenset(w for t in self.doc_texts + list(pack.spec.out_of_scope)
                                for w in re.findall(r"[a-z&]+", t.lower()))
        self.vocabulary = sorted(self._known)  # the pack's words, for spelling
        self.speech = Vocabulary.of(pack)  # the English speech-act lists with the pack's words added

    def with_learned(self, scores: dict[str, float], text: str) -> dict[str, float]:
        """The scores with the goal head's (`language.linking`), on the same scale: its threshold is the
        first threshold. A pack with example requests is matched by them, and the head can only add what
        they miss; one without (a pack made from a schema) has only its goals' descriptions, and the head,
        trained on how people ask for services, judges alone."""
        if not settings().learned_goals:
            return scores
        from pipeline.language.linking import linker_for

        linker = linker_for(self.pack)
        learned = linker.goal_probabilities(text)
        if not learned:
            return scores
        scale = self.first_threshold / linker.goal_threshold
        if not self.pack.has_examples():
            return {g: scale * learned[g] for g in scores}
        return {g: max(s, scale * learned[g]) for g, s in scores.items()}

    def _per_goal(self, doc_scores: np.ndarray) -> dict[str, float]:
        best = np.full(len(self.goals), -1.0)
        np.maximum.at(best, self._goal_of_doc, doc_scores)
        return {g: float(s) for g, s in zip(self.goals, best)}

    def state(self, query: str):
        raise NotImplementedError

    def scores(self, state) -> dict[str, float]:
        raise NotImplementedError

    def scope_score(self, state) -> float:
        """How close the request is to the pack's `out_of_scope` examples (-1 when it has none)."""
        raise NotImplementedError

    def explain(self, state, goal: str):
        raise NotImplementedError

    def rank(self, query: str) -> list[ScoredGoal]:
        """Every goal by its score for the request, judged without its values (a date or an amount names
        no goal and only blurs the words that do: "what did we spend in Q1" is about spending)."""
        return self._ranked(without_values(query), query)[0]

    def _ranked(self, judged: str, source: str) -> tuple[list[ScoredGoal], object]:
        """Every goal by its score for the words judged, and their state (for the out-of-scope test). A
        person pointed at names no goal ("invoice *him* for framing" is no request to talk to someone)."""
        words = self.spelled(_PERSON_OBJECT.sub("", judged))
        state = self.state(words)
        scores = self.with_learned(self.scores(state), words)
        return [ScoredGoal(g, s, source) for g, s in sorted(scores.items(), key=lambda kv: -kv[1])], state

    def progressive(self, query: str, first_threshold: float | None = None, next_threshold: float | None = None,
                    max_goals: int = MAX_GOALS) -> list[ScoredGoal]:
        """ProTIP: take the best goal, remove what it explains from the request, retrieve again; stop when
        nothing left scores above the threshold."""
        first = self.first_threshold if first_threshold is None else first_threshold
        following = self.next_threshold if next_threshold is None else next_threshold
        state = self.state(query)
        chosen: list[ScoredGoal] = []
        while len(chosen) < max_goals:
            taken = {c.goal for c in chosen}
            scores = {g: s for g, s in self.scores(state).items() if g not in taken}
            if not scores:
                break
            goal, score = max(scores.items(), key=lambda kv: kv[1])
            if score < (following if chosen else first):
                break
            chosen.append(ScoredGoal(goal, score, query))
            state = self.explain(state, goal)
        return chosen

    def shortlist(self, query: str, k: int) -> list[ScoredGoal]:
        """At most k goals for the LLM to choose among: the goals the request's clauses ask for first (a
        multi-goal request keeps all of them), then the best ranks; nothing when the request is out of the
        domain."""
        ranked = self.rank(query)
        if not ranked or ranked[0].score < self.first_threshold:
            return []
        picked = [ScoredGoal(g.goal, g.score, query) for g in self.by_clause(query)]
        names = {p.goal for p in picked}
        return (picked + [r for r in ranked if r.goal not in names])[:k]

    def clauses(self, query: str) -> list[str]:
        """The request cut where one request ends and another begins: at sentence punctuation and at
        'and', 'then', 'also', 'plus' — never inside a number ("$1,500") or a phrase of the pack's own
        vocabulary ("profit and loss", "invoices and sales")."""
        # A web address is one value, whatever marks it holds ("https://x.example/a?b"), and so are words in quotes
        # ("body 'we raised $1,240, thank you all!'"): each stands in as its number.
        spans = sorted([*web_address_spans(query), *(q.span() for q in QUOTED.finditer(query))])
        spans = [sp for i, sp in enumerate(spans) if not any(a <= sp[0] < b for a, b in spans[:i])]
        kept_whole = [query[a:b] for a, b in spans]
        protected = query
        for i, (a, b) in reversed(list(enumerate(spans))):
            protected = protected[:a] + f"\x04{i}\x04" + protected[b:]
        for phrase in self.protected_phrases:
            protected = re.sub(phrase, lambda m: m.group().replace(" ", "\x00"), protected, flags=re.I)
        # "$1,500", "2.5" and a clock time ("4:30") are one value.
        protected = re.sub(r"(?<=\d)[,.:](?=\d)", lambda m: {",": "\x01", ".": "\x02", ":": "\x03"}[m.group()],
                           protected)
        protected = re.sub(r"(?<=\d),(?= \d{4}\b)", "\x01", protected)  # "march 15, 2026" is one date
        # "between March 3, 2024 and June 10, 2024" is one period, not two requests.
        protected = re.sub(_BETWEEN, lambda m: m.group().replace(" ", "\x00"), protected)
        protected = re.sub(_TITLE, lambda m: m.group()[:-1] + "\x02", protected)  # "Mr. Chen" is one name
        parts = _CLAUSE_BREAK.split(protected)
        restored = [re.sub("\x04(\\d+)\x04", lambda m: kept_whole[int(m[1])], p).replace("\x00", " ")
                    .replace("\x01", ",").replace("\x02", ".").replace("\x03", ":").strip() for p in parts]
        clauses: list[str] = []
        for part in filter(None, restored):
            # A lone word ("jo@x.com", "ok"), a lone value ("(212) 555-0101") or a contact or web address with
            # its label ("phone 212-555-0101") belongs to the clause beside it.
            if clauses and (len(part.split()) < 2 or len(clauses[-1].split()) < 2 or not words(without_values(part))
                            or _LABELLED.search(part) and len(words(_LABELLED.sub(" ", part))) < 2):
                clauses[-1] += ", " + part
            else:
                clauses.append(part)
        return clauses or [query]

    def by_clause(self, query: str, first_threshold: float | None = None, clause_threshold: float | None = None,
                  max_goals: int = MAX_GOALS) -> list[ScoredGoal]:
        """`_by_clause`'s goals; when it finds none, the goal head's (`vouched`): a second judge of whether
        the request asks for something a pack made from a schema does at all; when that finds none either,
        the goals of the clauses that ask for one on their own, though the whole request scores too low (a
        story around them blurs it: "the kids have been cooped up all week, please find sailings to the
        island"), where the head vouches for such a clause too (`_vouched_for`)."""
        goals = self._by_clause(query, first_threshold, clause_threshold, max_goals) or self.vouched(query, max_goals) \
            or self._by_clause(query, first_threshold, clause_threshold, max_goals, whole_judged=False)
        for g in goals:
            g.source = as_written(query, g.source)
        if goals and self.pack.is_rest_api:  # a clause that asks for a deed the API does not do names no call
            refused = [c.lower() for c in self.clauses(query) if self.refused_why(c)]
            goals = [g for g in goals if not any(g.source.lower().startswith(c) for c in refused)]
        if goals and not self.pack.has_examples():
            taken = {g.goal for g in goals}
            rank = lru_cache(maxsize=None)(self.rank)  # a clause's words are ranked once, for both judges
            goals = _one_per_goal([self._the_head_breaks_a_tie(self._the_search_said(g, taken, rank), rank)
                                   for g in goals])
            goals = self._without_a_booking_its_search_serves(goals)
            if self.pack.is_rest_api:
                alone = len(goals) == 1  # a goal alone is the whole request's: any clause may name its resource
                goals = _one_per_goal([self._rest_choice(g, query if alone else g.source, rank) for g in goals])
                goals = self._what_it_points_back_at(query, goals, max_goals)
                through = self._through_a_role(goals[0], rank) if alone else []
                goals = through or [self._the_count_of_parts(self._the_part_said(g, rank)) for g in goals]
                goals = [self._found_not_asked(g, rank, [o.goal for o in goals if o is not g]) for g in goals]
            for g in goals:  # two goals merged are two clauses joined
                g.source = as_written(query, g.source)
        return goals

    def _rest_choice(self, chosen: ScoredGoal, words: str, rank: Callable[[str], list[ScoredGoal]]) -> ScoredGoal:
        """A REST pack's goal, judged in turn by the verb, the resource the words name, a person they name
        (whose things a list of all is not: "the best rated film of Ana Ruiz"), the picks they say, and what a
        chosen list leads to."""
        chosen = self._the_resource_said(self._the_one_named(self._the_verb_says(chosen, rank), rank), words)
        chosen = self._the_owner_said(chosen, rank)
        chosen = self._the_picks_say(self._the_person_named(chosen, words, rank), words, rank)
        return self._the_speakers_own(self._what_the_list_leads_to(chosen, rank), words, rank)

    def _the_owner_said(self, chosen: ScoredGoal, rank: Callable[[str], list[ScoredGoal]]) -> ScoredGoal:
        """An operation on things held by another thing (`/groups/{group_id}/contacts/{phone}`,
        `/contacts/{phone}/groups`) is meant only where the words name that owner or give its identifier;
        else the operation that does what the words ask (`asked_action`, else the same) to the same resource
        and needs no owner's identifier: "add a contact ..." makes a contact, it adds none to a group nobody
        named; "list every group" lists all groups, not one contact's. The first the words rank, else the one
        such operation there is."""
        api = self.pack.spec.apis[self.pack.spec.goals[chosen.goal].api]
        rest = api.rest
        if rest is None or not rest.resource or api.http is None:
            return chosen
        owners = self._owners(api)
        if not owners or resources_named(set(self._resources) | set(owners.values()), chosen.source) & \
                set(owners.values()):
            return chosen
        asked = asked_action(chosen.source)[0] or rest.action
        if asked in _READS and rest.action in _READS:
            asked = rest.action  # a read of one stays one, a list a list
        lists = ("list", "search")

        def does_it(name: str) -> bool:
            theirs = self._rest(name)
            return name != chosen.goal and theirs is not None and theirs.resource == rest.resource and \
                (theirs.action == asked or asked in lists and theirs.action in lists) and \
                not self._owners(self.pack.spec.apis[self.pack.spec.goals[name].api])
        ranked = [g.goal for g in rank(chosen.source) if does_it(g.goal)]
        others = ranked or [name for name in self.pack.spec.goals if does_it(name)]
        if not ranked and len(others) != 1:
            return chosen
        if set(owners) & self._arguments_given(chosen.source):
            return chosen  # the owner given by its identifier ("the groups of +3725551234")
        return ScoredGoal(others[0], chosen.score, chosen.source, chosen.context, "no owner named")

    @staticmethod
    def _takes_its_identifier(api, resource: str) -> bool:
        """Whether a call takes an identifier of the resource: an argument whose name says it, or one its path
        puts right after the resource's noun (`/contacts/{phone}`)."""
        return any(_identifies(a, resource) for a in api.arguments) or \
            api.http is not None and resource in path_identifiers(api.http.path).values()

    def _owners(self, api) -> dict[str, str]:
        """The identifier arguments in an operation's path of things other than its own resource, and the
        resource each identifies (`path_identifiers`)."""
        if api.http is None or api.rest is None:
            return {}
        return {argument: resource for argument, resource in path_identifiers(api.http.path).items()
                if resource and resource != api.rest.resource and not _identifies(argument, api.rest.resource)}

    def _the_part_said(self, chosen: ScoredGoal, rank: Callable[[str], list[ScoredGoal]]) -> ScoredGoal:
        """A read of a part of one thing (its path goes on past the thing's identifier: `/company/{id}/images`)
        chosen for words that do not say that part ("when did the band form") reads the thing itself
        (`/company/{id}`), where the words rank that read about as high (within NEAR_TIE): what the thing's own
        answer holds is asked in words the part's name does not share, and retrieval tells the two apart
        only by a little. The part is said by its own words, folded, or by a word of the request close to
        one of them in the packaged sentence model (`_says_the_part`: "the words of a song" are its lyrics)."""
        api = self.pack.spec.apis[self.pack.spec.goals[chosen.goal].api]
        if api.http is None or api.effects or api.rest is None or api.rest.action != "read":
            return chosen  # a list under one thing (its credits, `rest_semantics`) lists things of their own
        part = re.search(r"\}((?:/[^/{}]+)+)$", api.http.path)
        if part is None or _says_the_part(chosen.source, _path_literals(part.group(1)), _path_literals(api.http.path)):
            return chosen
        thing = self._reads_by_path.get(api.http.path[:part.start(1)])
        scores = {g.goal: g.score for g in rank(chosen.source)}
        if thing is None or thing not in scores or scores[thing] < scores.get(chosen.goal, 0.0) - NEAR_TIE:
            return chosen
        return ScoredGoal(thing, chosen.score, chosen.source, chosen.context, "its part not said")

    def _found_not_asked(self, chosen: ScoredGoal, rank: Callable[[str], list[ScoredGoal]],
                         others: list[str]) -> ScoredGoal:
        """Look up before asking: a read that would ask the user for an identifier (the words give none and no
        lookup finds one: a review by its id, for "a review of Blue Moon") gives way to a read ranked within
        NEAR_TIE that asks for none and looks one up (the reviews of a thing the words name, found by its
        search), as the planner's costs rank asking above a lookup; not to one that takes no identifier at
        all ("pull up a visit record" names none to find it by: a list of all is not it). Reads only: a call
        with effects is never swapped; `others`: the request's other goals, whose outputs are no question."""
        api, arguments, words = self.pack.spec.apis[self.pack.spec.goals[chosen.goal].api], self.pack.spec.arguments, \
            chosen.source
        if api.effects or self._questions(chosen.goal, words, set(), others, identifiers=True, looked=0) == 0:
            return chosen  # no identifier to ask at all: the words need not be read for it
        given = self._arguments_given(words)  # once: it runs the learned parts over the words
        if any(arguments[a].accepts_output for a in given if a in arguments) or \
                self._questions(chosen.goal, words, given, others, identifiers=True) == 0:
            return chosen  # an identifier the words give is the chosen call's, however it was read ("owner with id 12")
        for other in rank(words)[:VERB_RANKS]:
            if chosen.score - other.score >= NEAR_TIE:
                break
            theirs = self.pack.spec.apis[self.pack.spec.goals[other.goal].api]
            if other.goal == chosen.goal or theirs.rest is None or theirs.effects:
                continue
            looked = self._looked_up(other.goal, words)
            if looked and self._questions(other.goal, words, given, others, looked=looked) == 0:
                return ScoredGoal(other.goal, chosen.score, words, chosen.context, "found, not asked")
        return chosen

    def _questions(self, goal: str, words: str, given: set[str], others: list[str], identifiers: bool = False,
                   looked: int | None = None) -> int:
        """How many of the goal's required arguments (no default; `identifiers`: only those taking another
        call's output) the plan would ask the user for: those the words give no value of (`given`) and no other
        goal of the request (`others`) makes, less those a lookup finds (`looked`, when already counted)."""
        api, arguments = self.pack.spec.apis[self.pack.spec.goals[goal].api], self.pack.spec.arguments
        made = {self.pack.spec.apis[self.pack.spec.goals[g].api].produces for g in others}
        needed = {a for a in api.arguments if a not in api.optional and a not in given
                  and (not identifiers or a in arguments and arguments[a].accepts_output)
                  and not (a in arguments and made & set(arguments[a].accepts_output))}
        if not needed:
            return 0
        return max(0, len(needed) - (self._looked_up(goal, words) if looked is None else looked))

    def _looked_up(self, goal: str, words: str) -> int:
        """How many of the goal's arguments a lookup finds, with the goal's words (`lookups`)."""
        return sum(1 for of in lookup_goals(self.pack, [goal], {goal: words}).values() if of == goal)

    def _the_count_of_parts(self, chosen: ScoredGoal) -> ScoredGoal:
        """A question of how many of its parts a thing has ("how many chapters does the book have"), where no
        call lists those parts and the API reads them one by one (`/books/{id}/chapters/{number}`): the
        read of the thing itself (`/books/{id}`, the path up to its identifier), whose answer holds them."""
        noun = counted_noun(chosen.source)
        if noun is None:
            return chosen
        reads = self._reads_by_path
        holders, listed = [], False
        for path in reads:
            parts = path.split("/")
            for i, part in enumerate(parts[1:], 1):
                if part.startswith("{") or not parts[i - 1].startswith("{") or \
                        last_noun(snake_words(part)) != singular(noun):
                    continue
                if i + 1 < len(parts) and parts[i + 1].startswith("{"):
                    holders.append(parts[:i])
                listed |= i + 1 == len(parts)
        if listed or not holders:
            return chosen
        first_id = next(i for i, part in enumerate(holders[0]) if part.startswith("{"))
        thing = reads.get("/".join(holders[0][:first_id + 1]))
        if thing is None or thing == chosen.goal:
            return chosen
        return ScoredGoal(thing, chosen.score, chosen.source, chosen.context, f"a count of its {noun}")

    def _the_clause_says(self, top: ScoredGoal, clause: str) -> ScoredGoal:
        """A clause's best goal of a REST API, judged by the clause's own verb and the resource it names
        ("create a storage bucket, then upload a file to it": a bucket, then a file)."""
        said = self._the_resource_said(self._the_verb_says(ScoredGoal(top.goal, top.score, clause), self.rank), clause)
        return top if said.goal == top.goal else ScoredGoal(said.goal, top.score, top.source, chosen_by=said.chosen_by)

    def _rest(self, goal: str):
        return self.pack.spec.apis[self.pack.spec.goals[goal].api].rest

    def _through_a_role(self, chosen: ScoredGoal, rank: Callable[[str], list[ScoredGoal]]) -> list[ScoredGoal]:
        """Words that ask of someone or something by its role in another thing (`language.roles`: "the
        director of the film Heat", "the company that made the show Lost"): the read of that other thing
        whose answer holds the role's ids (`lookups.holders`: the film's credits), of the thing the words
        name ("film"), else of the one the words rank best; then, where the rest of the words ask more of
        the role's holder ("the *date of birth* of ..."), the read of it those words rank best. A role of a
        person (`person_nouns`) is one of the API's resource of people. Empty where the words say no role."""
        people = self._resources & PERSON_NOUNS
        person = next(iter(people)) if len(people) == 1 else None
        nouns = self._resources | (PERSON_NOUNS if person else set())
        phrase = role_phrase(chosen.source, nouns, self._resources)
        chosen_api = self.pack.spec.apis[self.pack.spec.goals[chosen.goal].api]
        if phrase is None:  # perhaps a field of a titled thing ("the genres of Heat")
            field = role_phrase(chosen.source, self._answer_words, self._resources)
            return [] if field is None else self._in_the_answer_of(field, chosen, rank)
        thing = next((r for r in self._resources if resources_named({r}, phrase.noun)), person)
        argument = next((a for a, spec in self.pack.spec.arguments.items()
                         if identified(a) == thing and spec.accepts_output), None)
        if argument is None:
            return self._in_the_answer_of(phrase, chosen, rank)
        holder = self._role_holder(phrase, thing, argument, chosen, rank)
        if holder is None:
            return []
        holder, through = holder
        a_thing = bool(resources_named(self._resources, phrase.noun))  # "the movies that ...", not "the director"
        found = [ScoredGoal(holder, chosen.score, chosen.source, chosen.context, f"the {phrase.noun} of a {through}")]
        if not phrase.asks_more({phrase.noun, thing, through}):
            takes_it = any(identified(a) == thing for a in chosen_api.arguments if a not in chosen_api.optional)
            if a_thing and takes_it and holder != chosen.goal and not chosen_api.effects:  # "films like one of hers"
                found.append(chosen)
            return found
        for other in rank(f"{phrase.rest} of the {thing}")[:VERB_RANKS]:
            api = self.pack.spec.apis[self.pack.spec.goals[other.goal].api]
            if not self.pack.goal_has_effects(other.goal) and other.goal != holder and \
                    any(identified(a) == thing for a in api.arguments if a not in api.optional):
                return [*found, ScoredGoal(other.goal, other.score, chosen.source, chosen.context,
                                           f"asked of the {phrase.noun}")]
        return found

    def _role_holder(self, phrase: RolePhrase, thing: str, argument: str, chosen: ScoredGoal,
                     rank: Callable[[str], list[ScoredGoal]]) -> tuple[str, str] | None:
        """The read whose answer holds the ids of the role's `thing` (`argument`), and the other resource it
        reads: of the one the words name, else the one they rank best; of its reads, the one whose answer
        lists them before one where they are a detail, then the best ranked. A read retrieval chose that
        holds them stands (a season's credits, where a show's would do too). None: nothing to go through."""
        kinds = self.pack.spec.arguments[argument].accepts_output
        reads = {g: r for g, r in holders(self.pack, argument, kinds).items() if r != thing}
        named = resources_named(set(reads.values()), phrase.belongs)
        if resources_named(self._resources, phrase.noun) and not (named or phrase.titled or names_a_person(phrase.belongs)):
            return None  # "the movie that is showing now" names nothing to go through
        chosen_api = self.pack.spec.apis[self.pack.spec.goals[chosen.goal].api]
        if chosen_api.produces in kinds and not chosen_api.effects and (rest := self._rest(chosen.goal)) is not None \
                and rest.resource != thing:
            return chosen.goal, rest.resource
        if len(named) == 1:
            reads = {g: r for g, r in reads.items() if r in named}
        order = [g.goal for g in rank(chosen.source)]
        best = min(reads, key=order.index, default=None)
        if best is None:
            return None
        reads = {g: r for g, r in reads.items() if r == reads[best]}
        outputs = {g: self.pack.spec.apis[self.pack.spec.goals[g].api].http for g in reads}
        holder = min(reads, key=lambda g: (outputs[g] is None or argument in outputs[g].outputs, order.index(g)))
        return holder, reads[holder]

    def _in_the_answer_of(self, phrase: RolePhrase, chosen: ScoredGoal, rank: Callable[[str], list[ScoredGoal]]) -> list[ScoredGoal]:
        """A thing no call takes an id of, asked of a titled other one ("the genres of the film Heat"): it is
        part of that one's answer, not the list of all of them: the read, of the thing the words name (else of
        any), whose answer has a field of that name (`RestSemantics.answers`), the one the words rank best. Only
        over a goal on no one thing (a list of all genres), or on one thing the words do not name and whose answer
        has no such field ("Ana Ruiz's birthday" is in no show's reviews): a call on one thing chosen for the
        words that names or answers them stands."""
        noun = _stem(phrase.noun.lower())

        def has_the_field(rest) -> bool:
            return rest is not None and any(_stem(w) == noun for field in rest.answers for w in field.split("_"))
        api, rest = self.pack.spec.apis[self.pack.spec.goals[chosen.goal].api], self._rest(chosen.goal)
        on_one = any(identified(a) for a in api.arguments if a not in api.optional)
        on_path = {singular(part) for part in _path_literals(api.http.path)} \
            if api.http is not None else set()  # what the call is on: each resource its path goes through
        named = rest is None or resources_named({rest.resource} | on_path & self._resources, chosen.source) or \
            rest.resource in PERSON_NOUNS and names_a_person(chosen.source)
        if not phrase.titled or on_one and (named or has_the_field(rest)):
            return []  # retrieval chose a call on one thing the words name, or that answers them: it stands
        reads = {}
        for name in self.pack.requestable_goals():
            api, rest = self.pack.spec.apis[self.pack.spec.goals[name].api], self._rest(name)
            if rest is None or rest.action != "read" or api.effects or not has_the_field(rest):
                continue
            if any(identified(a) == rest.resource for a in api.arguments if a not in api.optional):
                reads[name] = rest.resource
        named = resources_named(set(reads.values()), phrase.belongs)
        if len(named) == 1:
            reads = {g: r for g, r in reads.items() if r in named}
        order = [g.goal for g in rank(chosen.source)]
        best = min(reads, key=order.index, default=None)
        return [] if best is None else [ScoredGoal(best, chosen.score, chosen.source, chosen.context,
                                                   f"the {phrase.noun} in the answer of a {reads[best]}")]

    def _what_it_points_back_at(self, query: str, goals: list[ScoredGoal], max_goals: int) -> list[ScoredGoal]:
        """A clause that asks and points back ("and then show me that owner", "then delete it", "then show me
        its total", `lexicon/pointing_words.yaml`) asks for the call its verb names (`asked_action`; none: a
        read) on the thing the goal before it makes or finds: of the operations on that goal's resource, the
        one with that action that takes the resource's id (the earlier goal's output then feeds it). Only where
        no goal's words begin with the clause."""
        def place(words: str) -> int:
            return max(query.find(words), 0)
        for clause in classify(self.clauses(query), self.speech):  # what each clause does; no ranking needed
            if len(goals) >= max_goals or not clause.asks or clause.bare:
                continue
            own = [g for g in goals if place(g.source) == place(clause.text)]
            before = [g for g in goals if place(g.source) < place(clause.text)]
            earlier = self._rest(before[-1].goal) if before else None
            if earlier is None or not earlier.resource or not (clause.refers_back or _points_at(clause.text, earlier.resource)):
                continue
            if own and (resources_named(self._resources, clause.text) or self._rest(own[0].goal) is None
                        or self._rest(own[0].goal).resource == earlier.resource):
                continue  # the clause's own words chose a goal: by a thing they name, or one on that same thing
            action = asked_action(clause.text)[0]
            if action is None and not _points_at(clause.text, earlier.resource):
                continue  # a pronoun with no verb of a call ("i like her stuff"): it asks for nothing
            action = action or "read"
            follows = [name for name, goal in self.pack.spec.goals.items()
                       if name not in {g.goal for g in goals} and (rest := self._rest(name)) is not None
                       and rest.action == action and rest.resource == earlier.resource
                       and self._takes_its_identifier(self.pack.spec.apis[goal.api], earlier.resource)]
            # the thing itself (`/products/{id}`) before a part of it (`/products/{id}/quantity`)
            follow = min(follows, key=lambda name: _after_the_identifier(
                getattr(self.pack.spec.apis[self.pack.spec.goals[name].api].http, "path", "")) not in ("", None),
                default=None)
            if follow is not None:  # a pronoun's call ("delete it") was ranked by its verb alone: the thing is before
                goals = [*[g for g in goals if g not in own], ScoredGoal(follow, 0.0, clause.text,
                                                                         chosen_by=f"points back ({action})")]
        return goals

    def _the_verb_says(self, chosen: ScoredGoal, rank: Callable[[str], list[ScoredGoal]]) -> ScoredGoal:
        """A REST operation whose kind of call is not the one the words ask for (`asked_action`) is not taken:
        of the operations on the same resource, the first the words rank with that kind is taken instead
        ("pull up invoice 12" is no invoice made; "rename folder 4" no folder added). A change named only
        somewhere in the words (not by their opening) moves only a read to it ("a new customer, add him"); an
        operation whose own name says the words' opening verb stands ("approve the draft": `approve_draft`)."""
        rest = self._rest(chosen.goal)
        if rest is None or not rest.resource:
            return chosen
        if (searched := self._searched_for(chosen, rank)) is not chosen:
            return searched
        if any(self.names_its_call(clause, chosen.goal) for clause in self.clauses(chosen.source)):
            return chosen  # "..., and then unlock it": `games_achievements_unlock` whatever verb opens the words
        if (named := self._the_verb_names(chosen, rank)) is not None:
            return named
        asked, opens = asked_action(chosen.source)
        if asked is None:
            return self._the_field_changed(chosen, rank)
        if rest.action == asked or asked == "read" and rest.action in _READS:
            return chosen
        if not opens and rest.action not in _READS:
            return chosen
        if opens and _stem(opening_word(chosen.source)[0] or "") in _name_stems(chosen.goal):
            return chosen
        for other in rank(chosen.source):
            theirs = self._rest(other.goal)
            if theirs is not None and theirs.resource == rest.resource and \
                    (theirs.action == asked or asked == "read" and theirs.action in _READS):
                return ScoredGoal(other.goal, other.score, chosen.source, chosen.context, f"the verb ({asked})")
        return chosen

    def _the_verb_names(self, chosen: ScoredGoal, rank: Callable[[str], list[ScoredGoal]]) -> ScoredGoal | None:
        """An opening verb that names a deed of its own (none of `GENERAL_VERBS`: "charge", "unlock", "hire")
        and a word of the name of another operation on the same thing (`_on_the_same_thing`), not of the
        chosen one's, asks for that operation ("authorise payment 5 and then charge it": the charge of
        payment 5, not a second authorisation), the first the words rank; None where no other operation's
        name says the verb."""
        verb = (opening_word(chosen.source)[0] or "").lower()
        if not verb or verb in GENERAL_VERBS or _stem(verb) in _name_stems(chosen.goal):
            return None
        for other in rank(chosen.source):
            if self._on_the_same_thing(chosen.goal, other.goal) and _stem(verb) in _name_stems(other.goal):
                return ScoredGoal(other.goal, other.score, chosen.source, chosen.context, f"the verb ({verb})")
        return None

    def one_of_them(self, goal: str, clause: str) -> str | None:
        """For a REST list or search, the read of one of the things it lists where a clause that points back
        at it reads one of them, asking no change ("list my saved games and open the newest one"): of the
        operations on the same thing, the one that reads a thing by its identifier (its path ends in one);
        None otherwise."""
        rest = self._rest(goal)
        if rest is None or rest.action not in ("list", "search") or not picks_one(clause) \
                or asked_action(clause)[0] not in (None, "read"):  # no change asked ("open ...") reads it
            return None
        for other in [g.goal for g in self.rank(clause)] + list(self.pack.spec.goals):
            theirs, http = self._rest(other), self.pack.spec.apis[self.pack.spec.goals[other].api].http
            if theirs is not None and theirs.action == "read" and http is not None \
                    and http.path.rstrip("/").endswith("}") and self._on_the_same_thing(goal, other):
                return other
        return None

    def names_its_call(self, clause: str, goal: str) -> bool:
        """Whether a clause's opening verb names a deed of its own (none of `GENERAL_VERBS`) that is a word of
        a REST operation's name ("hire the one from ...": `post_applications_id_hire`): the API's own name
        for the call, however little else of the clause the operation's words share."""
        verb = (opening_word(clause)[0] or "").lower()
        return self.pack.is_rest_api and bool(verb) and verb not in GENERAL_VERBS \
            and _stem(verb) in _name_stems(goal)

    def names_its_change(self, clause: str, goal: str) -> bool:
        """Whether a clause opens with a verb of a change (`asked_action`: "change the name of flag 7 to ...")
        that a REST operation makes (`goal`: `update_flag`) to the thing it is on, whose noun the clause says
        (`resources_named`): the call the words ask for, however little else they share with its description."""
        rest = self._rest(goal)
        if not self.pack.is_rest_api or rest is None or not rest.resource:
            return False
        asked, opens = asked_action(clause)
        return opens and asked in _CHANGES and rest.action == asked and bool(resources_named({rest.resource}, clause))

    def _on_the_same_thing(self, goal: str, other: str) -> bool:
        """Whether two REST operations act on the same thing: the same resource, or paths that agree up to
        the first identifier (`/payment/{id}/authorize` and `/payment/{id}/charge`)."""
        ours, theirs = self._rest(goal), self._rest(other)
        if ours is None or theirs is None:
            return False
        if ours.resource and ours.resource == theirs.resource:
            return True
        paths = [self.pack.spec.apis[self.pack.spec.goals[g].api].http for g in (goal, other)]
        if any(http is None for http in paths):
            return False
        prefixes = [http.path.split("}")[0] for http in paths]
        return "{" in prefixes[0] and prefixes[0] == prefixes[1]

    def _searched_for(self, chosen: ScoredGoal, rank: Callable[[str], list[ScoredGoal]]) -> ScoredGoal:
        """A read of one thing by its identifier (`/products/{id}`) chosen for words that open with a verb of
        searching (`operation_words` search: "find the product Website maintenance") or of listing
        ("list every group"), or that ask for all of them ("show me every reservation", `_all_of_them`), and
        write no digit (no identifier) asks for the search of that resource (for listing, or where the API has
        no search of it, its list too), the first the words rank that needs no other thing's id (not the
        groups of one contact): the thing is found by what the words call it, or all are shown, not one asked
        for by an id the user does not have."""
        rest, api = self._rest(chosen.goal), self.pack.spec.apis[self.pack.spec.goals[chosen.goal].api]
        first, after = opening_word(chosen.source)
        opening, phrasal = (first or "").lower(), f"{first} {after}".lower()  # "look up": a phrasal verb
        wanted = ("search",) if opening in _VERB_FORMS["search"] or phrasal in _VERB_FORMS["search"] \
            else ("list", "search") if opening in _VERB_FORMS["list"] or _all_of_them(chosen.source, rest.resource) \
            else ()
        if rest.action != "read" or api.http is None or not api.http.path.rstrip("/").endswith("}") \
                or not wanted or re.search(r"\d", chosen.source):
            return chosen
        if wanted == ("search",) and not any((theirs := self._rest(name)) is not None and theirs.action == "search"
                                             and theirs.resource == rest.resource for name in self.pack.spec.goals):
            wanted = ("list",)  # no search of it: the list of them holds the one the words name
        for other in rank(chosen.source):
            theirs, found = self._rest(other.goal), self.pack.spec.apis[self.pack.spec.goals[other.goal].api]
            if theirs is not None and theirs.resource == rest.resource and theirs.action in wanted and not any(
                    self.pack.spec.arguments[a].accepts_output for a in found.arguments if a not in found.optional):
                return ScoredGoal(other.goal, other.score, chosen.source, chosen.context, f"the verb ({theirs.action})")
        return chosen

    def _the_field_changed(self, chosen: ScoredGoal, rank: Callable[[str], list[ScoredGoal]]) -> ScoredGoal:
        """A verb of a change that names no kind of call (`change_verbs`: "drop", "raise", "move") whose object
        is a field of the chosen resource, not the resource ("drop the ticket price of event 5"), asks to
        change that field: of the operations on the resource, the first the words rank that changes a thing
        and takes an argument named by the field's word (not an identifier) is taken."""
        verb = imperative_verb(chosen.source)
        rest = self._rest(chosen.goal)
        if verb is None or verb not in CHANGE_VERBS:
            return chosen
        said = stems(object_words(chosen.source, verb)) - {_stem(w) for w in rest.resource.split("_")}
        if not said:
            return chosen

        def changes_the_field(goal: str) -> bool:
            api = self.pack.spec.apis[self.pack.spec.goals[goal].api]
            return api.effects and any(not identified(a) and _stem(a.rsplit("_", 1)[-1]) in said for a in api.arguments)
        if changes_the_field(chosen.goal):
            return chosen
        for other in rank(chosen.source):
            theirs = self._rest(other.goal)
            if theirs is not None and theirs.resource == rest.resource and theirs.action in ("update", "action") \
                    and changes_the_field(other.goal):
                return ScoredGoal(other.goal, other.score, chosen.source, chosen.context, f"the field changed ({verb})")
        return chosen

    def _the_one_named(self, chosen: ScoredGoal, rank: Callable[[str], list[ScoredGoal]]) -> ScoredGoal:
        """A list or a search chosen for words that give one thing's identifier after its name ("show room
        type 3", `values.named_before`; not "the top-5 albums") asks for that thing: the read of one on
        the same resource that takes the identifier given, the best ranked."""
        rest = self._rest(chosen.goal)
        if rest is None or rest.action not in ("list", "search") or not rest.resource or \
                not re.search(r"\d", chosen.source):  # an identifier written has a digit: the values are read only then
            return chosen
        given = self._identifiers_named(chosen.source)
        if not given:
            return chosen
        for other in rank(chosen.source):
            theirs, api = self._rest(other.goal), self.pack.spec.apis[self.pack.spec.goals[other.goal].api]
            if theirs is not None and theirs.action == "read" and theirs.resource == rest.resource and \
                    not api.effects and given & {identified(a) for a in api.arguments if a not in api.optional}:
                return ScoredGoal(other.goal, other.score, chosen.source, chosen.context, "one named by its identifier")
        return chosen

    def _the_resource_said(self, chosen: ScoredGoal, words: str) -> ScoredGoal:
        """Where the words (its own, or the whole request's for a goal alone) name one resource of the API
        ("an album like the one I streamed ...") and not the chosen goal's, the operation that does the same to
        the named one: the same action, and its path the same after the resource's identifier
        (`/albums/{album_id}/reviews` for `/songs/{song_id}/reviews`); for a change, else the one change of
        that kind on the named resource itself ("create a storage bucket": `POST /buckets`, not a file
        under a bucket)."""
        rest = self._rest(chosen.goal)
        if rest is None or not rest.resource:
            return chosen
        named = resources_named(self._resources, words)
        if rest.resource in named or len(named) != 1:
            return chosen
        other, = named
        tail = _after_the_identifier(self.pack.spec.apis[self.pack.spec.goals[chosen.goal].api].http.path)
        tails = {name: _after_the_identifier(self.pack.spec.apis[goal.api].http.path)
                 for name, goal in self.pack.spec.goals.items()
                 if (theirs := self._rest(name)) is not None and theirs.resource == other and theirs.action == rest.action}
        # on the resource itself: `/services`, or its collection under another's (`/users/{user_id}/playlists`)
        own = [name for name, theirs in tails.items() if theirs in (None, "")
               or "{" not in theirs and "/" not in theirs.strip("/") and last_noun(snake_words(theirs.strip("/"))) == other]
        found = [name for name, theirs in tails.items() if theirs == tail] or \
            (own if rest.action in _CHANGES and len(own) == 1 else [])
        if found:
            return ScoredGoal(found[0], chosen.score, chosen.source, chosen.context, f"the resource said ({other})")
        return chosen

    def _the_speakers_own(self, chosen: ScoredGoal, words: str, rank: Callable[[str], list[ScoredGoal]]) -> ScoredGoal:
        """Words that say the thing is the speaker's own (`speaker_words`: "my playlists", "my profile") ask
        for the call that does the same without the identifier of whose it is, where that identifier is of
        the one there is now (`rest.one`: `/me` for a user's id): `/me/playlists`, not
        `/users/{user_id}/playlists` fed by `/me`."""
        rest = self._rest(chosen.goal)
        if rest is None or not says_its_own(words):
            return chosen
        api = self.pack.spec.apis[self.pack.spec.goals[chosen.goal].api]
        required = {a for a in api.arguments if a not in api.optional}
        current = current_ones(self.pack)  # once, not per argument
        whose = {a for a in required if identified(a) in current}
        if not whose:
            return chosen
        for other in rank(chosen.source)[:VERB_RANKS]:
            theirs, their_api = self._rest(other.goal), self.pack.spec.apis[self.pack.spec.goals[other.goal].api]
            if theirs is not None and (theirs.action, theirs.resource) == (rest.action, rest.resource) \
                    and {a for a in their_api.arguments if a not in their_api.optional} == required - whose:
                return ScoredGoal(other.goal, chosen.score, chosen.source, chosen.context, "the speaker's own")
        return chosen

    def _the_picks_say(self, chosen: ScoredGoal, words: str, rank: Callable[[str], list[ScoredGoal]]) -> ScoredGoal:
        """A list with picks chosen for words that do not say them ("the most played album" is no newest one)
        is not the list asked for: the list of the same resource whose picks the words say, else the best of
        the goals the words rank best (VERB_RANKS) on that resource that is no list with picks, the first whose
        own path words the words say before any other (the one named is then looked up)."""
        rest = self._rest(chosen.goal)
        if rest is None or rest.action != "list" or not rest.picks or picks_said(rest, words):
            return chosen
        said, best = 0, None
        for name in self.pack.spec.goals:
            theirs = self._rest(name)
            if theirs is not None and theirs.resource == rest.resource and (n := picks_said(theirs, words)) > said:
                said, best = n, name
        if best is not None:
            return ScoredGoal(best, chosen.score, chosen.source, chosen.context, "the picks said")
        others = [other for other in rank(words)[:VERB_RANKS] if (theirs := self._rest(other.goal)) is not None
                  and theirs.resource == rest.resource and not (theirs.action == "list" and theirs.picks)]
        said = stems(words)  # of those, first one whose own path words the words say ("similar" of `/{id}/similar`)
        other = next((o for o in others if self._path_words(o.goal) & said), others[0] if others else None)
        if other is not None:
            return ScoredGoal(other.goal, chosen.score, chosen.source, chosen.context, "no picks said")
        return chosen

    def _path_words(self, goal: str) -> set[str]:
        """The folded words of a goal's path after its first identifier (`/tv/{tv_id}/similar` -> similar)."""
        api = self.pack.spec.apis[self.pack.spec.goals[goal].api]
        return {_stem(w) for w in words_after_the_identifier(api.http.path if api.http is not None else "")}

    def _the_person_named(self, chosen: ScoredGoal, words: str,
                          rank: Callable[[str], list[ScoredGoal]] | None = None) -> ScoredGoal:
        """A list or a search of a resource chosen for words that write a person's name and name no other
        resource ("the latest film of Ana Ruiz") asks for that person's ones: the read of the API's resource
        of people (`person_nouns`) whose answer holds that resource's ids (`lookups.holders`); the person is
        then found by the name. Words that say a part of such a thing its read answers with (the part's word
        after the identifier in its path, within NEAR_TIE of the list in `rank`) ask for that read instead:
        the thing is then found through the person (`lookups`)."""
        rest = self._rest(chosen.goal)
        if rest is None or rest.action not in ("list", "search") or rest.resource in PERSON_NOUNS \
                or not names_a_person(words):
            return chosen
        if resources_named(self._resources - {rest.resource}, words):
            return chosen
        if rank is not None and (part := self._a_part_said(rest.resource, chosen, words, rank)) is not None:
            return part  # "when is Ana Ruiz's latest film out": a part of one of hers, found through her
        for argument, spec in self.pack.spec.arguments.items():
            if identified(argument) == rest.resource and spec.accepts_output:
                people = {goal: resource for goal, resource in holders(self.pack, argument, spec.accepts_output).items()
                          if resource in PERSON_NOUNS}
                if (read := preferred(self.pack, argument, people)) is not None:
                    return ScoredGoal(read, chosen.score, chosen.source, chosen.context,
                                      f"a person named ({people[read]})")
        return chosen

    def _a_part_said(self, resource: str, chosen: ScoredGoal, words: str,
                     rank: Callable[[str], list[ScoredGoal]]) -> ScoredGoal | None:
        """The read of a part of one thing of the resource (`/films/{film_id}/release_dates`) whose part the
        words say in so many words (folded), ranked within NEAR_TIE of the chosen goal; None without one."""
        said = {_stem(w) for w in re.findall(r"[a-z]+", words.lower()) if w not in FUNCTION_WORDS}
        for other in rank(chosen.source)[:VERB_RANKS]:
            theirs, api = self._rest(other.goal), self.pack.spec.apis[self.pack.spec.goals[other.goal].api]
            required = [a for a in api.arguments if a not in api.optional]
            if theirs is None or theirs.action != "read" or theirs.resource != resource \
                    or len(required) != 1 or identified(required[0]) != resource \
                    or chosen.score - other.score >= NEAR_TIE:
                continue
            if said & self._path_words(other.goal):
                return ScoredGoal(other.goal, chosen.score, chosen.source, chosen.context, "a part of theirs said")
        return None

    @cached_property
    def _answer_words(self) -> set[str]:
        """The words of the fields reads of one thing answer with ("genres", "place_of_birth"), but grammar's: of the
        first fields each (those retrieval reads too)."""
        return {w for api in self.pack.spec.apis.values() if api.rest is not None and api.rest.action == "read"
                for field in api.rest.answers[:DESCRIBED_ANSWERS] for w in field.lower().split("_") if w.isalpha()} \
            - FUNCTION_WORDS

    @cached_property
    def _reads_by_path(self) -> dict[str, str]:
        """URL path -> the goal that GETs it (`/books/{id}` -> the book's read)."""
        reads: dict[str, str] = {}
        for name, goal in self.pack.spec.goals.items():
            http = self.pack.spec.apis[goal.api].http
            if http is not None and http.method == "GET":
                reads.setdefault(http.path, name)  # the first, as the part rule took it
        return reads

    @cached_property
    def _resources(self) -> set[str]:
        return {api.rest.resource for api in self.pack.spec.apis.values() if api.rest is not None and api.rest.resource}

    def _what_the_list_leads_to(self, chosen: ScoredGoal, rank: Callable[[str], list[ScoredGoal]]) -> ScoredGoal:
        """Where the chosen goal is a list its words pick by (`picks.picks_said`: "the best rated album") and
        the rest of its words ask for more of what it lists ("which label put out the best rated album": the words
        but its picks, its resource's name, its own description's, its filters' listed values and values told it,
        and those that qualify a pick, `lexicon/pick_qualifiers.yaml`: "the *most* popular ... *right now*"), the
        call that answers that: the best
        goal for the rest of the words asked of that resource, scoring at least the next threshold, among
        those without effects that take the listed thing's id. The list then finds that id (`lookups`)."""
        rest = self._rest(chosen.goal)
        if not picks_said(rest, chosen.source):
            return chosen
        described = re.findall(r"[a-z]+", self.pack.spec.goals[chosen.goal].description.lower())
        api = self.pack.spec.apis[self.pack.spec.goals[chosen.goal].api]
        listed = [w for a in api.arguments if a in self.pack.spec.arguments  # its own filters' values ("suites")
                  for v in self.pack.spec.arguments[a].values or [] for w in re.findall(r"[a-z]+", v.lower())]
        named = {_stem(w) for w in [*rest.picks, rest.resource, *described, *PICK_QUALIFIERS, *listed]}
        remainder = " ".join(w for w in re.findall(r"[A-Za-z0-9']+", without_values(chosen.source))
                             if _stem(w.lower()) not in named)  # nor the days or amounts it is told
        if not content_stems(remainder):
            return chosen  # the words ask for the list itself ("list the best rated albums")
        for other in rank(f"{remainder} of the {rest.resource}")[:VERB_RANKS]:  # asked of the listed thing
            if other.score < self.next_threshold:
                break
            if other.goal == chosen.goal or self.pack.goal_has_effects(other.goal):
                continue
            api = self.pack.spec.apis[self.pack.spec.goals[other.goal].api]
            if any(identified(a) == rest.resource for a in api.arguments if a not in api.optional):
                return ScoredGoal(other.goal, other.score, chosen.source, chosen.context, "what the list leads to")
        return chosen

    def _the_search_said(self, chosen: ScoredGoal, taken: set[str],
                         rank: Callable[[str], list[ScoredGoal]]) -> ScoredGoal:
        """The search the request's words say, over the goal chosen for them: of the two best goals for its
        words, the one without effects, when the chosen one is the other and
        - the words ask to find something (`lexicon/search_words.yaml`: "can you find me a bus"), or ask
          what there is ("which buses leave at noon?", `asks_what`), and the chosen goal has effects: a
          search is what they ask for, and what a search leads to (a booking, a purchase) is asked in words
          of its own; or
        - the request gives values the search's arguments take and the chosen goal's do not, and none the
          other way ("a piano lesson in Ely": a subject and a town are what the search for a tutor takes,
          the booking takes a tutor and a day): the values say which call the words are about, unless the
          words say the chosen goal's own verb ("book a lesson in Ely": the booking is asked for, and a
          search for what it lacks serves it, `sessions`).
        Either way a call with effects is not taken on words that say another call. Only for a pack made
        from a schema: one goal's description is all retrieval has of it, and a booking's reads much like
        its search's; a pack with example requests is matched by their words."""
        asks_to_find = (bool(_SEARCH_WORDS.search(chosen.source)) or asks_what(chosen.source)) and \
            self.pack.goal_has_effects(chosen.goal)
        values_may_say = not _says_its_verb(chosen.goal, chosen.source)
        if not (asks_to_find or values_may_say):
            return chosen  # neither reason can hold: the words are not ranked again
        ranked = rank(chosen.source)[:2]
        other = next((g for g in ranked if g.goal != chosen.goal), None)
        if other is None or chosen.goal not in {g.goal for g in ranked} or other.goal in taken \
                or self.pack.goal_has_effects(other.goal):
            return chosen
        if asks_to_find or values_may_say and self._values_say(other.goal, chosen):
            return ScoredGoal(other.goal, other.score, chosen.source, chosen.context,
                              "search words" if asks_to_find else "search values")
        return chosen

    def _without_a_booking_its_search_serves(self, goals: list[ScoredGoal]) -> list[ScoredGoal]:
        """Where the request also asks for the search that finds what a call with effects acts on
        (`picked_from`), and that call's own words neither say its verb nor give it a value ("I'd love a
        cabin! Can you find one in Banff?"), those words are the same request as the search's: one goal, the
        search, with both. What the user picks from the search's answer is asked for after it, in words of
        its own ("..., and book the first one"). A REST read whose words point at its thing (`_points_at`:
        "..., then open that folder") reads what the call before it made: two calls."""
        searches = {g.goal: g for g in goals if not self.pack.goal_has_effects(g.goal)
                    and not ((rest := self._rest(g.goal)) is not None and _points_at(g.source, rest.resource))}
        out = []
        for g in goals:
            search = next((searches[s] for s, _ in picked_from(self.pack, g.goal) if s in searches), None)
            if search is None or _says_its_verb(g.goal, g.source) or \
                    self._arguments_given(" ".join(filter(None, [g.source, g.context]))) & set(self.pack.goal_takes(g.goal)):
                out.append(g)
                continue
            search.source = f"{g.source}, {search.source}" if goals.index(g) < goals.index(search) else \
                f"{search.source}, {g.source}"
            search.chosen_by = f"{search.chosen_by}; with the words of {g.goal} (nothing of its own)"
        return out

    def _the_head_breaks_a_tie(self, chosen: ScoredGoal, rank: Callable[[str], list[ScoredGoal]]) -> ScoredGoal:
        """The goal the goal head clearly prefers among those retrieval scores about as high as the chosen one
        for its words (within NEAR_TIE; the head gives it HEAD_MARGIN more probability), for a pack made from a
        schema. Retrieval reads one line of description per goal, and a re-worded line flips near-ties (a
        search for rental cars and the booking of one); the head, trained on how SGD train's users ask
        services for things under six wordings of each schema, reads the request against each goal's name,
        description and arguments. Measured before it was built (top-3 goals, gold, and the head's
        probabilities kept per opening): on nine train services the head never saw, 23 openings fixed and 4
        broken over the original schema and SGD-X v1-v5; on SGD dev (30 openings a service) 53 fixed, 10
        broken. It keeps the chosen goal when the words say its verb and not the other's ("book a car":
        the booking), and a search the words ask for ("find me a car": the booking is asked in words of its
        own). Not for a REST API's operations, where the head is no judge of which call (`_head_picks_goals`)."""
        linker = self._gate_linker()
        if linker is None or not self._head_picks_goals:
            return chosen
        ranked = rank(chosen.source)[:3]
        mine = next((g for g in ranked if g.goal == chosen.goal), None)
        if mine is None:
            return chosen
        says_verb = _says_its_verb(chosen.goal, chosen.source)
        finds = bool(_SEARCH_WORDS.search(chosen.source)) and not self.pack.goal_has_effects(chosen.goal)
        near = [g for g in ranked if g.goal != chosen.goal and mine.score - g.score < NEAR_TIE
                and not (says_verb and not _says_its_verb(g.goal, chosen.source))
                and not (finds and self.pack.goal_has_effects(g.goal))]
        if not near:
            return chosen
        p = linker.goal_probabilities(chosen.source)
        best = max(near, key=lambda g: p.get(g.goal, 0.0))
        if p.get(best.goal, 0.0) < p.get(chosen.goal, 0.0) + HEAD_MARGIN:
            return chosen
        return ScoredGoal(best.goal, best.score, chosen.source, chosen.context, "goal head over a near-tie")

    def _values_say(self, goal: str, chosen: ScoredGoal) -> bool:
        """Whether the chosen goal's words give values the goal takes and the chosen one does not, and none
        the other way."""
        given = self._arguments_given(" ".join(filter(None, [chosen.source, chosen.context])))
        mine, theirs = set(self.pack.goal_takes(chosen.goal)), set(self.pack.goal_takes(goal))
        return bool(given & (theirs - mine)) and not given & (mine - theirs)

    def _arguments_given(self, text: str) -> set[str]:
        """The arguments the text gives a value its words keep (`language.values`), a yes/no flag's aside:
        that is read from a word of the feature it names, which any request to the service may hold ("a
        table" of outdoor tables), so it says nothing of which call."""
        return {name for name, found in self._values(text).items()
                if any(r.value not in ("True", "False") for r in found.kept)}

    def _identifiers_named(self, text: str) -> set[str]:
        """The resources (`rest.identified`) of the identifier arguments the text gives a value right after
        a word of the argument's name ("room type 3": a room type's)."""
        from pipeline.language.values import named_before

        return {identified(name) for name, found in self._values(text).items()
                if identified(name) and any(named_before(text, r.span[0], name) for r in found.kept)}

    def _values(self, text: str) -> dict:
        """The text's value readings, each argument's kept and dropped (`language.values`). Which arguments
        are given does not depend on the day, so today's date reads the relative ones."""
        from pipeline.language.readers import value_readings
        from pipeline.language.values import link_values

        return link_values(self.pack, text, value_readings(self.pack, text, date.today()))

    def vouched(self, query: str, max_goals: int = MAX_GOALS) -> list[ScoredGoal]:
        """The goal the learned goal head gives at least its threshold for the whole request, on the
        retrieval's scale; nothing without a head. Retrieval's thresholds are set for packs with example
        requests: a pack made from a schema has one short description per goal, and requests scored
        against it sit just under them ("is it going to be sunny in Oslo on Friday"). The head, trained on
        how people ask SGD's services and refuse other domains', tells those apart: on five train services
        it never saw, retrieval alone took 71% of their openings in, retrieval or the head 86%, and each
        refused 99% of other domains' openings (docs/design/language.md). For a REST API the head only
        lets the request in: which calls it asks for is retrieval's, clause by clause (`_head_picks_goals`)."""
        linker = self._gate_linker()
        learned = linker.goal_probabilities(query) if linker else {}
        if not learned:
            return []
        for goal, p in linker.goal_probabilities_of_the_words_around_names(query).items():
            learned[goal] = max(learned[goal], p)
        goal, p = max(learned.items(), key=lambda kv: kv[1])
        if p < linker.goal_threshold or self._declared_foreign(query):
            return []
        if not self._head_picks_goals:  # the head says the request is the API's; retrieval says which calls
            chosen = self._by_clause(query, 0.0, 0.0, max_goals) or self.rank(query)[:1]
            return [ScoredGoal(g.goal, g.score, g.source, g.context, "retrieval, in the domain by the goal head")
                    for g in chosen]
        return [ScoredGoal(goal, p * self.first_threshold / linker.goal_threshold, query, chosen_by="goal head")]

    @cached_property
    def _head_picks_goals(self) -> bool:
        """Whether the goal head may choose which goal, not only whether a request is in the domain: not for
        a REST API's operations. The head learned from SGD's services, whose goals are whole tasks ("find a
        restaurant", "reserve a table"); an API's operations are calls on one resource each ("Get Credits",
        "Get Images" of a movie). Measured on the requests of eval-openapi's six specs and RestBench TMDB that
        make one call (the last of a chain for TMDB), best goal for the words without their values: the head
        48 of 208, retrieval 119 of 208."""
        return not self.pack.is_rest_api

    def _vouched_for(self, words: str) -> bool:
        """Whether the goal head gives some goal of the pack at least its threshold for these words: the
        words ask for something the pack does. Retrieval's scores rise for any word of a goal's name ("search
        for a hotel" against a search for bus trips); the head's do not. False where the head is no judge."""
        linker = self._gate_linker()
        return linker is not None and \
            max(linker.goal_probabilities(words).values(), default=0.0) >= linker.goal_threshold

    def _gate_linker(self):
        """The linker whose goal head judges whether words are in the domain, or None: the gate is off, or
        the pack has example requests (matched by them: retrieval is set for it)."""
        if not settings().learned_gate or self.pack.has_examples():
            return None
        from pipeline.language.linking import linker_for

        return linker_for(self.pack)

    def _declared_foreign(self, query: str) -> bool:
        """Whether the request, or one of its clauses, is closer to an example the pack declares out of
        scope than to any goal: the pack's own refusal outweighs the head."""
        if not self.pack.spec.out_of_scope:
            return False
        return any(self._judge(words)[1] for words in dict.fromkeys([query, *self.clauses(query)]))

    def _by_clause(self, query: str, first_threshold: float | None, clause_threshold: float | None,
                   max_goals: int, whole_judged: bool = True) -> list[ScoredGoal]:
        """One goal per clause that asks for one (speech_acts), in the request's order (`ClauseWalk`); nothing
        when the whole request scores below `first_threshold` (out of the domain), or, when the whole is not
        judged, when no clause that asks names a goal on its own. When no clause asks, the request is one
        goal: its best."""
        first_threshold = self.first_threshold if first_threshold is None else first_threshold
        clause_threshold = self.first_threshold if clause_threshold is None else clause_threshold
        if max_goals == 1:  # one goal per request (flow and workflow packs): the best for the whole of it
            return self._one_goal(query, first_threshold)
        ranked = self.rank(query)
        if not ranked or whole_judged and ranked[0].score < first_threshold:
            return []
        clauses = classify(self.clauses(query), self.speech)
        judged = [self._best_for_clause(c.text, clause_threshold) for c in clauses]
        if self.pack.is_rest_api:  # a clause's own verb and resource say its call, before clauses of one call are joined
            judged = [(self._the_clause_says(top, c.text), foreign) for (top, foreign), c in zip(judged, clauses)]
        if ranked[0].score < first_threshold and not any(
                c.asks and not foreign and (top.score >= (BARE_PHRASE_THRESHOLD if c.bare else clause_threshold)
                                            and self._vouched_for(c.text) or self.names_its_change(c.text, top.goal))
                for c, (top, foreign) in zip(clauses, judged)):
            return []
        walk = ClauseWalk(self, clauses, judged, clause_threshold, BARE_PHRASE_THRESHOLD)
        picked = walk.run()
        best = walk.best
        if not picked:
            if len(clauses) == 1 and clauses[0].asks and not walk.foreign and whole_judged \
                    and ranked[0].score >= first_threshold and self._vouched_for(clauses[0].text):
                # One clause is the whole request, which scores in the domain with its values said (the
                # clause is judged without them: "the third episode of ...") and the goal head vouches for.
                return [ScoredGoal(best[0].goal, max(best[0].score, ranked[0].score), query, chosen_by=best[0].chosen_by)]
            if any(c.asks for c in clauses):
                return []  # it asks, but for nothing this domain does ("can you recommend a restaurant")
            # Nothing asks in so many words ("my customer Tom Reed has a new email ..."): one goal.
            return [ScoredGoal(ranked[0].goal, ranked[0].score, query)]
        return [ScoredGoal(p.goal, p.score, ", ".join(p.words),
                           ", ".join(t for t in dict.fromkeys(p.context) if t not in p.words),
                           next((b.chosen_by for b in best if b.goal == p.goal), "retrieval"))
                for p in picked][:max_goals]

    @cached_property
    def refused_why(self) -> Callable[[str], str]:
        """`refused_why(clause)`: why a clause names no call of a REST API (`deed_not_done`, `change_not_made`),
        else "". Judged once per clause (the last thousand): `by_clause` and the Run's analysis both ask."""
        @lru_cache(maxsize=1024)
        def why(clause: str) -> str:
            deed = self.deed_not_done(clause)
            change = None if deed else self.change_not_made(clause)
            return (f"the API documents nothing that would {deed!r}" if deed
                    else f"the API has no call that would {change}" if change else "")
        return why

    def deed_not_done(self, clause: str) -> str | None:
        """For a REST API, the verb a clause's imperative opens with (`speech_acts.imperative_verb`) where it
        asks for a deed of its own (it is none of `GENERAL_VERBS`) that nothing in the API's documentation
        names (no word of its operations' names, descriptions, arguments or answers begins as the verb does:
        "recommend" has "recommendations"), nor, for a verb of a change (`change_verbs`: "book", "take ...
        off"), a word of its object one of the API's things: the API does not do it ("refund my order" of a
        pet store, "play some jazz" or "start a timer" of a task board). None where the API may do what the
        clause asks."""
        if not self.pack.is_rest_api:
            return None
        verb = imperative_verb(clause)
        if verb is None or verb in GENERAL_VERBS:
            return None
        stem = _stem(verb)
        if any(w.startswith(stem) or len(w) >= 4 and stem.startswith(w) for w in self._documented):
            return None
        if verb in CHANGE_VERBS and stems(object_words(clause, verb)) & self._things:
            return None  # "book a visit" of an API with visits: a change to one of its things
        return verb

    def change_not_made(self, clause: str) -> str | None:
        """For a REST API, the change a clause's imperative opens with a verb of (`asked_action`: to add or to
        delete; not a question's, "where is the company that created ...") where its best operation, judged
        by its verb and the resource it names, only reads or makes the other change, and no operation on
        that operation's thing (`_on_the_same_thing`) makes the change asked: the API does not make it
        ("delete employee 550" of an API that adds and reads employees, "create a leaderboard" of one that
        only reads them). Where the clause's resource has such an operation, the verb chose it
        (`_the_verb_says`). None where the API may make the change."""
        if not self.pack.is_rest_api:
            return None
        asked, opens = asked_action(clause)
        opening = (opening_word(clause)[0] or "").lower()
        if not opens or asked not in ("create", "delete") or opening in QUESTION_OPENERS \
                or opening in _ASKING_WHAT_WORDS:
            return None  # a question's change is what it asks about ("the company that created the film")
        top = self._the_clause_says(self._best_for_clause(clause, self.first_threshold)[0], clause)
        rest = self._rest(top.goal)
        if rest is None or rest.action == asked or rest.action not in (*_READS, "create", "delete"):
            return None
        if any((theirs := self._rest(goal)) is not None and theirs.action == asked
               and self._on_the_same_thing(top.goal, goal) for goal in self.pack.spec.goals):
            return None
        return f"{asked} any {rest.resource.replace('_', ' ')}" if rest.resource else asked

    @cached_property
    def _things(self) -> frozenset[str]:
        """The folded words of the API's resources and of its arguments' names (what a request's object may be)."""
        return frozenset({_stem(r) for r in self._resources} |
                         {_stem(w) for a in self.pack.spec.arguments for w in a.split("_") if len(w) > 2} - {"id"})

    @cached_property
    def _documented(self) -> frozenset[str]:
        """The stems of the words of the pack's goal documents (what its operations are named and described by)."""
        return frozenset(_stem(w) for text in self.doc_texts for w in re.findall(r"[a-z]+", text.lower()))

    def clause_analysis(self, query: str, top: int = 3) -> list[ClauseAnalysis]:
        """Each clause of the request: what it does (asks, a bare phrase, tells), whether it points back, and
        its best goals with their scores, as `by_clause` judges them (without the clause's values)."""
        out = []
        for clause in classify(self.clauses(query), self.speech):
            ranked = self._ranked(without_values(clause.text), clause.text)[0][:top]
            act = "tells" if not clause.asks else "phrase" if clause.bare else "asks"
            refused = self.refused_why(clause.text)
            out.append(ClauseAnalysis(text=clause.text, act=act, refers_back=clause.refers_back,
                                      goals=[{"goal": g.goal, "score": round(g.score, 4)} for g in ranked],
                                      refused=refused))
        return out

    def _one_goal(self, query: str, threshold: float) -> list[ScoredGoal]:
        """A one-goal pack's goal for the request: judged on its words and on its words without values or
        proper names ("reservation for 7 under the name Hassan Ali" is a reservation whoever Hassan is);
        nothing below the threshold or closer to an `out_of_scope` example ("book me a flight")."""
        top, foreign = self._judge(query)
        bare = without_names(without_values(query))
        if bare and bare != query:
            bare_top, bare_foreign = self._judge(bare)
            if bare_top.score > top.score:
                top, foreign = bare_top, bare_foreign
        if foreign or top.score < threshold:
            return []
        return [ScoredGoal(top.goal, top.score, query)]

    def _best_for_clause(self, clause: str, threshold: float) -> tuple[ScoredGoal, bool]:
        """The clause's best goal (judged without its values, as `rank` does), and without the topic of a
        request to talk ("a call about the P&L" asks for a call) when what is left still names a goal; and
        whether those words ask for what the pack declares it does not serve (they are closer to one of its
        `out_of_scope` examples than to any goal)."""
        clause = without_values(clause)
        # A question how to do something, or whether to, asks for a goal whose examples ask so ("how do I void
        # a check", "should i rent or own the space"), whatever thing it names ("how can I send an invoice in spanish"
        # asks for no invoice, "should we raise prices" for no sales report).
        kind = question_kind(clause)
        head = without_topic(clause)
        if head is not None:
            top, foreign = self._judge(head, kind)
            # names a goal by the pack's own threshold: a caller's lower one ("tell me" scores above zero) does not
            if top.score >= max(threshold, self.first_threshold):
                return top, foreign
        return self._judge(clause, kind)

    def goals_asking(self, kind: str) -> list[str] | None:
        """The goals some of whose examples ask a question of this kind (None when no goal's do)."""
        if kind not in self._goals_asking:
            found = [g for g in self.goals if any(question_kind(e) == kind for e in self.pack.spec.goals[g].examples)]
            self._goals_asking[kind] = found or None
        return self._goals_asking[kind]

    @cached_property
    def _goals_asking(self) -> dict[str, list[str] | None]:
        return {}

    @cached_property
    def _refused_kinds(self) -> set[str | None]:
        """The kinds of question the pack's `out_of_scope` examples ask."""
        return {question_kind(e) for e in self.pack.spec.out_of_scope}

    def _judge(self, words: str, kind: str | None = None) -> tuple[ScoredGoal, bool]:
        """The best goal for the words (among the goals whose examples ask questions of `kind`, when some do;
        its source: the words judged), and whether they are out of scope. The pack's refusals are of things
        to do ("pay this bill"): a question how or whether to do something is out of scope only when some
        refusal asks a question of its kind."""
        among = self.goals_asking(kind) if kind else None
        ranked, state = self._ranked(words, words)
        top = next((g for g in ranked if among is None or g.goal in among), ranked[0])
        if among is not None and kind not in self._refused_kinds:
            return top, False
        return top, self.scope_score(state) > top.score

    def spelled(self, text: str) -> str:
        """The text with each lower-case word that is no English word and not the pack's own replaced by
        the pack word it misspells ("the expnse report"): a typo must not hide the goal it names."""
        from wordfreq import zipf_frequency

        def fix(match: re.Match) -> str:
            word = match.group()
            if len(word) < 4 or word in self._known or zipf_frequency(word, "en") >= MISSPELLING_ZIPF:
                return word
            close = difflib.get_close_matches(word, self.vocabulary, n=1, cutoff=MISSPELLING_CUTOFF)
            return close[0] if close else word

        return re.sub(r"(?<![\w@.])[a-z]+(?![\w@])", fix, text)

    @property
    def protected_phrases(self) -> list[str]:
        if not hasattr(self, "_protected"):
            texts = [g.description for g in self.pack.spec.goals.values()]
            texts += [a.description for a in self.pack.spec.apis.values()]
            found = {m.group() for t in texts for m in re.finditer(r"\b[\w&]+ and [\w&]+\b", t.lower())}
            # "invoice and sales" is "invoices and sales" too
            self._protected = [r"\b" + re.sub(r"(\w)s?\b", r"\1s?", re.escape(p)) + r"\b"
                               for p in sorted(found, key=len, reverse=True)]
        return self._protected


# What may stand between two clauses of one goal's words where the request is cut (`_CLAUSE_BREAK`).
_BETWEEN_CLAUSES = r"\W+(?:(?i:and|then|also|plus|but|separately)\W+)*"


def as_written(query: str, source: str) -> str:
    """A goal's words as the user wrote them: its clauses, joined with commas when they were cut apart, are
    the stretch of the request from the first to the last with the user's own punctuation (and the mark that
    ends the last), where nothing else stands between them. The heads learned requests as people write
    them, and read a full stop differently from a comma joined in its place (a greeting's first word became
    a place once the stop after it was a comma). Otherwise the joined clauses.

    >>> as_written("Hi there. Find me a bus to Reno, for two.", "Hi there, Find me a bus to Reno, for two")
    'Hi there. Find me a bus to Reno, for two.'
    >>> as_written("Book it and then call Ann? Thanks", "Book it, call Ann")
    'Book it and then call Ann?'
    >>> as_written("Find a bus. Also a cab. And a ferry", "Find a bus, And a ferry")  # a clause between
    'Find a bus, And a ferry'
    >>> as_written('add a talk titled "Rust for Embedded Folks"', 'add a talk titled "Rust for Embedded Folks')
    'add a talk titled "Rust for Embedded Folks"'
    >>> as_written('add "Jo" and Ann', 'and Ann'), as_written('say "hi" and Ann"', 'say "hi')
    ('and Ann', 'say "hi"')
    """
    words = list(re.finditer(r"\w+", source))
    if not words:
        return source
    pattern = re.escape(words[0].group())
    for before, word in zip(words, words[1:]):
        cut = "," in source[before.end():word.start()]
        pattern += (_BETWEEN_CLAUSES if cut else r"\W+") + re.escape(word.group())
    found = re.search(r"(?<!\w)" + pattern + r"(?!\w)[\"”]?[.?!]*", query)
    if found is None:
        return source
    text = found.group()  # a closing quote ends the words only where they hold its opening one
    if text.rstrip(".?!")[-1:] in '"”' and text.count('"') % 2 + text.count("”") - text.count("“") == 1:
        text = text[:len(text.rstrip(".?!")) - 1] + text[len(text.rstrip(".?!")):]
    return text


def picked_from(pack: Pack, goal: str) -> list[tuple[str, list[str]]]:
    """The searches (goals without effects) whose answer gives what a goal with effects must be told and
    the search does not take: what the user picks from that answer (the restaurant to book, the bus's
    departure time). Each with those arguments, in the pack's order.

    >>> from types import SimpleNamespace as S
    >>> apis = {"book": S(arguments=["name", "day"], optional={}, returns=["name"], effects=True),
    ...         "find": S(arguments=["city"], optional={}, returns=["name", "city"], effects=False)}
    >>> pack = S(spec=S(apis=apis, goals={"book": S(api="book", internal=False), "find": S(api="find", internal=False)}))
    >>> picked_from(pack, "book"), picked_from(pack, "find")
    ([('find', ['name'])], [])
    """
    api = pack.spec.apis[pack.spec.goals[goal].api]
    if not api.effects:
        return []
    required = [a for a in api.arguments if a not in api.optional]
    out = []
    for name, other in pack.spec.goals.items():
        search = pack.spec.apis[other.api]
        if name == goal or other.internal or search.effects:
            continue
        picks = [a for a in required if a in search.returns and a not in search.arguments]
        if picks:
            out.append((name, picks))
    return out


_POINTING, _POSSESSORS = word_list("pointing_words", "before_a_noun"), word_list("pointing_words", "possessors")
_ANY_THING, _MADE = word_list("pointing_words", "any_thing"), word_list("pointing_words", "what_was_made")


# How close (cosine, the packaged MiniLM) a word of a request must be to a word of a part's name to say it.
# Set by looking at pairs of single words: "poster", "logo" and "picture" to images 0.47-0.60, "words" to
# lyrics 0.48; "name", "look", "released", "founded" to images 0.16-0.34, "start" to recommendations 0.25.
PART_SAID = 0.45


def _says_the_part(words: str, part: list[str], path: list[str]) -> bool:
    """Whether the words say a part of a thing (`Retriever._the_part_said`): a word of its name, folded, or a
    word of theirs close to one (PART_SAID), but the words of the path (the thing's own noun says no part of it)
    and of the language (`function_words`)."""
    said = {w for w in re.findall(r"[a-z]+", words.lower()) if len(w) > 2 and w not in FUNCTION_WORDS}
    if {_stem(w) for w in said} & {_stem(w) for w in part}:
        return True
    own = {_stem(w) for w in path}
    said = sorted(w for w in said if _stem(w) not in own)
    if not said:
        return False
    vectors = embedding_model().encode([*part, *said], normalize_embeddings=True, show_progress_bar=False)
    return float((vectors[len(part):] @ vectors[:len(part)].T).max()) >= PART_SAID


_ALL = word_list("operation_words", "all_of_them")
_ALL_BEFORE_NOUN = word_list("operation_words", "all_before_noun")


def _all_of_them(words: str, resource: str) -> bool:
    """Whether the words ask for every thing of the resource: a word for all of them right before its noun,
    an article or a possessive between ("show me every reservation", "all the groups", "all of our rooms").

    >>> _all_of_them("show me every reservation we have", "reservation"), _all_of_them("all of our rooms", "room")
    (True, True)
    >>> _all_of_them("show me the reservation", "reservation"), _all_of_them("every day, show a room", "room")
    (False, False)
    >>> _all_of_them("can i see every workout session i've done", "workout_session")
    True
    """
    tokens = re.findall(r"[a-z]+", words.lower())
    for i, token in enumerate(tokens):
        if token in _ALL:
            rest = [t for t in tokens[i + 1:i + 5] if t not in _ALL_BEFORE_NOUN]
            if rest and (resources_named({resource}, rest[0]) or resources_named({resource}, " ".join(rest[:2]))):
                return True  # "every workout session" of workout_session too
    return False


def _points_at(words: str, resource: str) -> bool:
    """Whether the words point at a thing of the resource already spoken of (`lexicon/pointing_words.yaml`):
    a possessor ("its total"), or a pointing word before the resource's noun ("pull up the invoice").

    >>> _points_at("then show me its total", "invoice"), _points_at("pull up the invoice", "invoice")
    (True, True)
    >>> _points_at("and then show me the record", "invoice"), _points_at("then show me what got saved", "invoice")
    (True, True)
    >>> _points_at("pull up an invoice", "invoice"), _points_at("show the notes", "invoice")
    (False, False)
    """
    tokens = re.findall(r"[a-z]+", words.lower())
    return bool(_POSSESSORS & set(tokens)) or \
        any(a in _POINTING and (b in _ANY_THING or resources_named({resource}, b)) for a, b in zip(tokens, tokens[1:])) \
        or any(a == "what" and _MADE & set(tokens[i + 1:i + 4]) for i, a in enumerate(tokens))


def _identifies(argument: str, resource: str) -> bool:
    """Whether an argument is an identifier of the resource: its name says the resource, or the resource's
    last word (`eventId` of special_event, `pet_type_id` of pettype).

    >>> _identifies("eventId", "special_event"), _identifies("pet_type_id", "pettype"), _identifies("id", "pet")
    (True, True, False)
    """
    said = identified(argument)
    return bool(said) and (said == resource or len(said) >= 3 and resource.endswith(said))


def _path_literals(path: str) -> list[str]:
    """The words of a path but its parameters, lower case (`/tv/{tv_id}/top_rated` -> tv, top, rated)."""
    return re.findall(r"[a-z]+", re.sub(r"\{[^}]*\}", "", path.lower()))


def _after_the_identifier(path: str) -> str | None:
    """A path's part after its first parameter (`/movie/{movie_id}/credits` -> `/credits`); None without one."""
    found = re.search(r"\{[^}]+\}(.*)$", path or "")
    return found.group(1) if found else None


def _one_per_goal(goals: list[ScoredGoal]) -> list[ScoredGoal]:
    """Goals that came out the same are one goal, at the first one's place, with the words of each ("I need a
    bike for Sunday. Can you find bikes in Oslo?": the head reads the first clause as the search the second
    asks for)."""
    merged: dict[str, ScoredGoal] = {}
    for g in goals:
        seen = merged.get(g.goal)
        if seen is None:
            merged[g.goal] = g
            continue
        context = ", ".join(t for t in dict.fromkeys([seen.context, g.context]) if t)
        merged[g.goal] = ScoredGoal(g.goal, max(seen.score, g.score), f"{seen.source}, {g.source}", context,
                                    seen.chosen_by)
    return list(merged.values())


_PERSON_OBJECT = re.compile(rf"(?<=\w ){any_of('subject_pronouns', 'objects')}\b\s*", re.IGNORECASE)
_NAME_WORD = re.compile(r"(?<![.!?]\s)(?<!^)\b[A-Z][\w'’-]*")


def without_names(text: str) -> str:
    """The text without capitalised words inside a sentence (proper names: "Hassan Ali", "O'Neill")."""
    return re.sub(r"\s+", " ", _NAME_WORD.sub(" ", text.strip())).strip()


class DenseRetriever(Retriever):
    """Cosine similarity of sentence embeddings (the packaged MiniLM, or a model trained for the pack)."""

    method = "dense"

    def __init__(self, pack: Pack, model_path: str | None = None, exclude: frozenset[str] = frozenset(),
                 model=None):
        super().__init__(pack, exclude)
        self.model = model if model is not None else embedding_model(model_path)
        self.doc_vectors = self._embed(self.doc_texts)
        # One vector per goal (the mean of its documents): what a chosen goal explains.
        self.goal_vectors = np.stack([_unit(self.doc_vectors[self._goal_of_doc == i].mean(axis=0))
                                      for i in range(len(self.goals))])
        self.scope_vectors = self._embed(pack.spec.out_of_scope) if pack.spec.out_of_scope else None

    def _embed(self, texts: list[str]) -> np.ndarray:
        return np.asarray(self.model.encode(texts, normalize_embeddings=True, convert_to_numpy=True,
                                            show_progress_bar=False))

    def state(self, query: str) -> np.ndarray:
        return self._embed([query])[0]

    def scores(self, state: np.ndarray) -> dict[str, float]:
        return self._per_goal(self.doc_vectors @ _unit(state))

    def scope_score(self, state: np.ndarray) -> float:
        return -1.0 if self.scope_vectors is None else float((self.scope_vectors @ _unit(state)).max())

    def explain(self, state: np.ndarray, goal: str) -> np.ndarray:
        return state - self.goal_vectors[self.goals.index(goal)]


class SparseRetriever(Retriever):
    """BM25 over the same documents (bm25s). A raw BM25 score s is put on the 0..1 scale as s / (s + K),
    K a typical score of one shared content word, so one weak word match stays below the thresholds.
    Taking a goal removes the request's words that the goal's documents contain."""

    method = "sparse"
    K = 4.0

    def __init__(self, pack: Pack, exclude: frozenset[str] = frozenset()):
        super().__init__(pack, exclude)
        import bm25s

        self._bm25s = bm25s
        self.index = bm25s.BM25()
        self.index.index(self._tokenize(self.doc_texts), show_progress=False)
        vocabulary = self.index.vocab_dict if hasattr(self.index, "vocab_dict") else {}
        self._vocabulary = vocabulary
        self.scope_index = None
        if pack.spec.out_of_scope:
            self.scope_index = bm25s.BM25()
            self.scope_index.index(self._tokenize(pack.spec.out_of_scope), show_progress=False)
        self.goal_words = {g: set() for g in self.goals}
        for goal, text in zip(self.doc_goals, self.doc_texts):
            self.goal_words[goal] |= set(self._words(text))

    def _tokenize(self, texts: list[str]):
        return self._bm25s.tokenize(texts, stopwords="en", show_progress=False)

    def _words(self, text: str) -> list[str]:
        tokenized = self._tokenize([text])
        inverse = {i: w for w, i in tokenized.vocab.items()}
        return [inverse[i] for i in tokenized.ids[0]]

    def state(self, query: str) -> list[str]:
        return self._words(query)

    def scores(self, state: list[str]) -> dict[str, float]:
        known = [w for w in state if w in self._vocabulary]
        if not known:
            return {g: 0.0 for g in self.goals}
        raw = np.asarray(self.index.get_scores(known))
        return self._per_goal(raw / (raw + self.K))

    def scope_score(self, state: list[str]) -> float:
        vocabulary = getattr(self.scope_index, "vocab_dict", {}) if self.scope_index is not None else {}
        known = [w for w in state if w in vocabulary]
        if not known:
            return -1.0
        raw = float(np.asarray(self.scope_index.get_scores(known)).max())
        return raw / (raw + self.K)

    def explain(self, state: list[str], goal: str) -> list[str]:
        return [w for w in state if w not in self.goal_words[goal]]


class HybridRetriever(Retriever):
    """A weighted sum of the dense and sparse scores: meaning from the embedding, exact domain words
    (product names, codes) from BM25."""

    method = "hybrid"
    SPARSE_WEIGHT = 0.3

    def __init__(self, pack: Pack, model_path: str | None = None, exclude: frozenset[str] = frozenset(),
                 model=None):
        super().__init__(pack, exclude)
        self.dense = DenseRetriever(pack, model_path, exclude, model)
        self.sparse = SparseRetriever(pack, exclude)

    def state(self, query: str):
        return self.dense.state(query), self.sparse.state(query)

    def scores(self, state) -> dict[str, float]:
        dense, sparse = self.dense.scores(state[0]), self.sparse.scores(state[1])
        w = self.SPARSE_WEIGHT
        return {g: (1 - w) * dense[g] + w * sparse[g] for g in self.goals}

    def scope_score(self, state) -> float:
        dense, sparse = self.dense.scope_score(state[0]), max(self.sparse.scope_score(state[1]), 0.0)
        return -1.0 if dense < -0.5 else (1 - self.SPARSE_WEIGHT) * dense + self.SPARSE_WEIGHT * sparse

    def explain(self, state, goal: str):
        return self.dense.explain(state[0], goal), self.sparse.explain(state[1], goal)


def _unit(v: np.ndarray) -> np.ndarray:
    n = np.linalg.norm(v)
    return v / n if n else v


_LABELLED = re.compile(f"{CONTACT.pattern}|{WEB_ADDRESS.pattern}", re.IGNORECASE)  # a contact or a web address
_TITLE = re.compile(r"\b(?:" + "|".join(sorted(word_list("honorifics", "dotted"))) + r")\.(?=\s)", re.I)
_MONTH_ABBREVIATIONS = alternation(name.lower() for name in calendar.month_abbr if name)


def _link(part: str) -> str:
    return any_of("clause_links", part)


_BETWEEN = re.compile(rf"\b{_link('range_opens')}\s+[^;:?!]{{1,30}}?\s+{_link('range_joins')}\s+"
                      rf"(?=\d|{_MONTH_ABBREVIATIONS}[a-z]*\b|(?:the\s+)?{_link('range_edges')}\b)", re.IGNORECASE)
_CLAUSE_BREAK = re.compile(rf"\s*(?:[;:?!+]|\.(?=\s|$)|,|\s-\s)\s*(?:{_link('after_a_mark')}\b,?\s*)*"
                           + "|" + "".join(rf"(?<!\b{re.escape(w)})" for w in words_of("clause_links", "not_after"))
                           + rf"\s+{_link('links')}\s+"
                           # a subordinate clause: a conjunction, then its subject ("so i can see", "before we")
                           rf"|\s+(?={_link('opens_a_clause')}\s+{_link('clause_subjects')}\b)"
                           # "so" before a request: what the story led to ("rent went up so show me ...")
                           rf"|\s+(?={_link('leads_to')}\s+(?:" + "|".join(sorted(REQUEST_VERBS)) + r")\b)", re.I)

METHODS = ("dense", "sparse", "hybrid")
TRAINED_DIR = "retriever"  # inside the pack's folder: written by `nesyplan train-retriever`


def trained_model(pack: Pack) -> Path | None:
    """The embedding model trained for this pack, when `train-retriever` has saved one."""
    path = pack.yaml_path.parent / TRAINED_DIR
    return path if (path / "config.json").is_file() else None


def build_retriever(pack: Pack, method: str = "dense", model: str | None = None,
                    exclude: frozenset[str] = frozenset()) -> Retriever:
    """`model`: a sentence-transformers folder; default the pack's trained one, else, for an imported API,
    the encoder trained on other APIs' requests (`api_encoder`), else the packaged MiniLM.
    `model="packaged"` forces the packaged one."""
    if method not in METHODS:
        raise ValueError(f"unknown retrieval method {method!r}: choose one of {', '.join(METHODS)}")
    adapted = None
    if model is None:
        found = trained_model(pack)
        model = str(found) if found else None
        adapted = api_encoder() if found is None and pack.is_rest_api else None
    elif model == "packaged":
        model = None
    if method == "sparse":
        return SparseRetriever(pack, exclude)
    retriever = (HybridRetriever if method == "hybrid" else DenseRetriever)(pack, model, exclude, adapted)
    if adapted is not None:  # its scores run higher: its threshold is where it takes in what the packaged one did
        from pipeline.retrieval.api_encoder import dense_shift

        raised = dense_shift() * (1 - HybridRetriever.SPARSE_WEIGHT if method == "hybrid" else 1.0)
        retriever.first_threshold += raised
        retriever.next_threshold += raised
    return retriever


def api_encoder():
    """The encoder trained on requests to many APIs (`api_encoder`), when it is shipped and turned on."""
    from pipeline.retrieval.api_encoder import api_retrieval_model, has_adapter

    return api_retrieval_model() if settings().api_retrieval and has_adapter() else None


_retrievers: dict[tuple, Retriever] = {}
_lock = threading.Lock()


def get_retriever(pack: Pack, method: str | None = None, model: str | None = None) -> Retriever:
    """The pack's retriever, its index built once per process and rebuilt when the pack or its trained
    model changes."""
    method = method or settings().retrieval_method
    trained = trained_model(pack)
    key = (str(pack.yaml_path), pack.yaml_path.stat().st_mtime_ns, method, model,
           (trained / "config.json").stat().st_mtime_ns if trained else 0, settings().api_retrieval)
    with _lock:
        cached = _retrievers.get(key)
    if cached is None:
        cached = build_retriever(pack, method, model)
        with _lock:
            _retrievers[key] = cached
    return cached
