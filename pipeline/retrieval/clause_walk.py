"""The walk over a request's clauses, in order, that gives each clause asking for something its goal
(`Retriever._by_clause`): one typed step per kind of clause, over one record of what the walk has picked
and what has been told since.

A clause that tells (context: "sales were up in Q2") names no goal, whatever words it holds. An asking
clause that only points back ("pls generate it") asks for the best goal of the clauses before it. Each
goal's words are its asking clause, the clause it points back to, and the fragments around it that ask
nothing of their own ("..., for March"); its context is the story its asking clause points back at ("a $40
charge hit us, look *it* up"; "..., *his* new email is ..."). A story nothing points at gives nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property
from typing import Callable, Protocol

from pipeline.language.words import word_list
from pipeline.packs.pack import Pack
from pipeline.retrieval.scored import ScoredGoal
from pipeline.retrieval.speech_acts import (Clause, Vocabulary, asks_only_for_results, asks_to_talk, names_nothing,
                                            restates, states_value, topic)
from pipeline.values.lexicon import alternation
from pipeline.values.spans import without_values

def _links(part: str) -> str:
    """`lexicon/clause_links.yaml`'s list `part` as a regex group, the longest phrase first."""
    return alternation(word_list("clause_links", part))


_BOTH = re.compile(rf"\b{_links('both')}\b(?! {_links('linking')})", re.IGNORECASE)
_SHARED = re.compile(rf"(?:{_links('before_shared')} )?({_links('shared')})(?: {_links('linking')} "
                     rf"{_links('shared_pointers')})?,?\s+{_links('shared_times')}\b", re.IGNORECASE)
_SAME_VALUE = re.compile(rf"\b{_links('same')} {_links('same_value')}\b", re.IGNORECASE)
_PERSON_PRONOUN = re.compile(rf"\b{_links('person_pronouns')}\b", re.IGNORECASE)


class Judge(Protocol):
    """What the walk asks of the retriever (`Retriever`): its pack and speech-act words, and how it ranks
    and judges words."""
    pack: Pack
    speech: Vocabulary

    def rank(self, query: str) -> list[ScoredGoal]: ...

    def _best_for_clause(self, clause: str, threshold: float) -> tuple[ScoredGoal, bool]: ...

    def _the_verb_says(self, chosen: ScoredGoal, rank: Callable[[str], list[ScoredGoal]]) -> ScoredGoal: ...

    def names_its_call(self, clause: str, goal: str) -> bool: ...

    def names_its_change(self, clause: str, goal: str) -> bool: ...

    def one_of_them(self, goal: str, clause: str) -> str | None: ...


@dataclass
class Picked:
    """A goal chosen at clause `at`: `words` its source, `context` the story its clause points back at."""
    goal: str
    score: float
    at: int
    words: list[str]
    context: list[str]


@dataclass
class ClauseWalk:
    """Reads `clauses` in order (each judged: its best goal, and whether it asks for what the pack declares
    out of scope) and picks a goal per asking clause. An asking clause needs `clause_threshold` to name a
    goal, or `bare_threshold` when it asks only by a bare phrase."""
    retriever: Judge
    clauses: list[Clause]
    judged: list[tuple[ScoredGoal, bool]]
    clause_threshold: float
    bare_threshold: float
    picked: list[Picked] = field(default_factory=list)
    story: list[str] = field(default_factory=list)  # the clauses since the last goal, naming none themselves
    foreign: set[int] = field(default_factory=set)  # clauses that ask for what the pack declares out of scope
    leading: list[str] = field(default_factory=list)  # asking fragments before the first goal, naming none
    following: bool = False  # whether every clause since the last goal's points back at it

    @cached_property
    def best(self) -> list[ScoredGoal]:
        """Each clause's best goal (`judged` is not changed once the walk starts)."""
        return [top for top, _ in self.judged]

    def run(self) -> list[Picked]:
        for i, clause in enumerate(self.clauses):
            if not clause.asks:
                self._told(clause)
            elif self._shared(clause):
                continue
            elif self.judged[i][1]:
                self._refused(i, clause)
            else:
                self._asked(i, clause)
        return self.picked

    def _told(self, clause: Clause) -> None:
        """A clause that tells ("..., his new email is jo@x.com"; "... an invoice for the tile job. The total
        is $400."): context of the goal before it while every clause since points back at it."""
        points = clause.refers_back or states_value(clause.text)
        if self.picked and points and self.following:
            self.picked[-1].context.append(clause.text)
        self.following = self.following and points
        self.story.append(clause.text)

    def _shared(self, clause: Clause) -> bool:
        """A fragment for the two goals before it, or all of them, that says so ("sales and spending, both
        for May"): their words, whatever it scores or refuses on its own."""
        shared = _SHARED.match(clause.text)
        if not (shared and self.picked and not self.story):
            return False
        count = 2 if shared.group(1).lower() in word_list("clause_links", "both") else len(self.picked)
        for picked in self.picked[-count:]:
            picked.words.append(clause.text)
        return True

    def _refused(self, i: int, clause: Clause) -> None:
        """It asks for something the domain does not do ("refund this payment"). Where it asks again for what
        the clause before asked ("we must wire 2k to the landlord, could you do this for us"), that was the
        same request, refused with it."""
        if self.picked and self.picked[-1].at == i - 1 and restates(clause.text):
            self.picked.pop()
            self.foreign.add(i - 1)
        self.story = []
        self.foreign.add(i)

    def _asked(self, i: int, clause: Clause) -> None:
        top = self.best[i]
        goal, score, words = top.goal, top.score, [clause.text]
        needed = self.bare_threshold if clause.bare else self.clause_threshold
        if self.picked and asks_only_for_results(clause.text, self.retriever.speech):
            score = 0.0  # "..., i want the actual numbers": what the request before it gives, not a new goal
        earlier = [k for k in range(i) if k not in self.foreign]
        context: list[str] = []
        if clause.refers_back and earlier:
            goal, score, words, context = self._pointed_back(clause, earlier, goal, score, words, needed)
        elif score < needed and self.picked and goal == top.goal and self.retriever.names_its_call(clause.text, goal):
            # A later step whose verb is the API's own name for its call ("find the applications for job 5,
            # and hire the one from Ann Lee"): that call, however little else its words share with it.
            score = needed
        elif score < needed and goal == top.goal and self.retriever.names_its_change(clause.text, goal):
            # A change the clause's verb asks for to a thing it names ("change the name of flag f2a8 to ..."):
            # the operation that makes it, though the words share little else with its description.
            score = needed
        if score < needed:
            self._fragment(clause)
        else:
            self._pick(i, clause, goal, score, words, context)

    def _pointed_back(self, clause: Clause, earlier: list[int], goal: str, score: float, words: list[str],
                      needed: float) -> tuple[str, float, list[str], list[str]]:
        """The goal of a clause that points back. Below the threshold it asks for the best goal before it
        ("pls generate it"). Above it, a clause whose only words are a request verb and a reference asks for
        the story just before it when that names a goal better ("the bank wants our expenses for Q2, can you
        pull them"); "call me about it" names its own. Where its own verb makes it another call of a REST API
        than the one pointed at ("..., then charge it"), the clause pointed at is its context, not its words:
        the call is judged by its own clause's verb, and takes from the other only what it names.
        Returns the goal, its score, its words and that context."""
        retriever, best = self.retriever, self.best
        told = [k for k in earlier if self.clauses[k].text in self.story]
        context: list[str] = []
        j = None
        if score < needed:
            j = max(earlier, key=lambda k: best[k].score)
        elif told and names_nothing(clause.text, retriever.speech):
            j = max(told, key=lambda k: best[k].score)
            j = j if best[j].score > score else None
        if j is not None:
            goal, score, words = best[j].goal, best[j].score, [self.clauses[j].text, clause.text]
            if retriever.pack.is_rest_api:  # "..., delete it": the story's thing, by the clause's own verb
                goal = retriever._the_verb_says(ScoredGoal(goal, score, clause.text), retriever.rank).goal
                # "list my saved games and open the newest one": a read of one of those the list found
                goal = retriever.one_of_them(goal, clause.text) or goal
                if goal != best[j].goal:
                    words, context = [clause.text], [self.clauses[j].text]
            if score < needed and not self.clauses[j].asks and not self.judged[j][1]:
                # Neither says enough alone ("my kids like museums, can you search for a nice one"): the ask
                # and the story it points back at are one request, judged together. An earlier clause that
                # asked on its own and named nothing here stays refused.
                together, foreign_words = retriever._best_for_clause(", ".join(words), self.clause_threshold)
                if not foreign_words and together.score > score:
                    goal, score = together.goal, together.score
        about = topic(self.clauses[earlier[-1]].text)
        if about and names_nothing(clause.text, retriever.speech):
            # What the request to talk just before is about is what "it" points at ("a call regarding costs
            # in Q3, fetch those first"), when that names a goal of its own.
            top = retriever._best_for_clause(about, self.clause_threshold)[0]
            if top.goal != best[earlier[-1]].goal and top.score >= self.clause_threshold:
                goal, score, words, context = top.goal, top.score, [about, clause.text], []
        return goal, score, words, context

    def _fragment(self, clause: Clause) -> None:
        """An asking clause that names no goal: a fragment of the request before it ("..., for March"), or
        before the first goal ("$900 for a logo. Bill it"); else part of the story."""
        if self.picked and not clause.refers_back and not self.story:
            self.picked[-1].words.append(clause.text)
        elif not self.picked and not clause.refers_back:
            self.leading.append(clause.text)
        else:
            self.story.append(clause.text)

    def _pick(self, i: int, clause: Clause, goal: str, score: float, words: list[str],
              context: list[str] | None = None) -> None:
        """The clause names `goal`: a new goal, or more words for one picked before."""
        speech = self.retriever.speech
        # What it points back at gives what its own words do not ("a $40 charge hit us, look it up"). So does
        # the story before a request to talk that names no topic: it is why they want to talk ("the
        # reconciliation keeps failing. is there someone I could speak with?").
        about_story = asks_to_talk(clause.text, speech) and topic(clause.text) is None
        pointed_at = [t for t in self.story if t not in words] if clause.refers_back or about_story else []
        if not pointed_at and self.picked and (clause.refers_back and _PERSON_PRONOUN.search(clause.text)
                                               or _SAME_VALUE.search(clause.text)):
            # "bill Ann Lee ..., update her record"; "..., and the sales figures for the same months"
            pointed_at = [t for t in self.picked[-1].words if t not in words]
        pointed_at = [*(context or []), *(t for t in pointed_at if t not in (context or []))]
        if not self.picked:
            words = [*self.leading, *words]
        self.story, self.following = [], True
        same = next((p for p in self.picked if p.goal == goal), None)
        if same is not None:
            same.words.extend(w for w in words if w not in same.words)
            same.context.extend(pointed_at)
            return
        before = self.clauses[i - 1].text
        if self.picked and self.picked[-1].at == i - 1 and _BOTH.search(before) and without_values(before) == before:
            # "both A and B for Q1": what follows B is said of A too, when A's words give no value.
            self.picked[-1].words.append(clause.text)
        self.picked.append(Picked(goal, score, i, words, pointed_at))
