"""The learned heads applied to one pack: which goal a text asks for, which span is which argument's value.

A `Linker` encodes the pack's goal and argument words once; a text is encoded once (the last few are
kept), whatever number of goals, spans and arguments are scored on it. With no trained heads (a checkout
before `train-language`), it links nothing (`learned_parts` says so), and callers keep their rules.

>>> from pipeline.packs.pack import load_pack
>>> linker = linker_for(load_pack("restaurant_reservation"))
>>> sorted(linker.goal_probabilities("book me a table for two tonight")) == sorted(linker.goals)
True
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from functools import cached_property

import numpy as np

from pipeline.language.descriptions import pack_argument_texts, pack_goal_texts
from pipeline.language.encoder import Encoded, encode, sentence_vectors
from pipeline.language.heads import goal_head, slot_head, span_features, span_head, tagger
from pipeline.language.spans import Proposal
from pipeline.settings import settings

_TEXTS_KEPT = 32
TAGGER_THRESHOLD = 0.5  # a span's geometric-mean tag probability: more likely its value than not


class Linker:
    """The pack's goal and argument words are encoded the first time a head needs them, not before: a pack
    whose heads are off (or never asked) costs nothing."""

    def __init__(self, pack):
        self.pack = pack
        self.goal = goal_head()
        self.slot = slot_head()
        self.tagger = tagger()
        self.goals = pack.requestable_goals()
        self.arguments = [*pack.spec.arguments, *pack.spec.ir_extra]
        self._encoded: OrderedDict[str, Encoded] = OrderedDict()
        self._tagged: OrderedDict[str, object] = OrderedDict()
        self._lock = threading.Lock()

    @cached_property
    def _goal_right(self):
        texts = pack_goal_texts(self.pack)
        return self.goal.project_right(sentence_vectors([texts[g] for g in self.goals])) if self.goal and texts else None

    @cached_property
    def _slot_right(self):
        texts = pack_argument_texts(self.pack)
        return (self.slot.project_right(sentence_vectors([texts[a] for a in self.arguments]))
                if self.slot and texts else None)

    def _remembered(self, kept: OrderedDict, text: str, make):
        """What `make` gives for the text, made once while it is among the last few texts."""
        with self._lock:
            found = kept.get(text)
        if found is None:
            found = make(text)
            with self._lock:
                kept[text] = found
                while len(kept) > _TEXTS_KEPT:
                    kept.popitem(last=False)
        return found

    def encoded(self, text: str) -> Encoded:
        return self._remembered(self._encoded, text, lambda t: encode([t])[0])

    @cached_property
    def _argument_words(self) -> list[str]:
        texts = pack_argument_texts(self.pack)
        return [texts[a] for a in self.arguments]

    def tagged(self, text: str, arguments: list[str] | None = None):
        """The text read by the tagger against the arguments named (all of the pack's when None). Each
        (text, argument) is read once while the text is among the last few: a request is read against the
        arguments its goals take, not all of a pack's (sixty of a movie database's cost 1.3 s a request on
        2 cores, its goals' few a tenth of that)."""
        names = self.arguments if arguments is None else [a for a in dict.fromkeys(arguments) if a in self.arguments]
        with self._lock:
            have = self._tagged.get(text)
            if have is not None:
                self._tagged.move_to_end(text)
        missing = [a for a in names if have is None or a not in have.arguments]
        if missing:
            words = dict(zip(self.arguments, self._argument_words))
            more = self.tagger.tag(text, [words[a] for a in missing])
            more.arguments = missing
            with self._lock:
                have = self._tagged.get(text)  # another thread may have read some of them meanwhile
                have = more if have is None else have.with_more(more)
                self._tagged[text] = have
                while len(self._tagged) > _TEXTS_KEPT:
                    self._tagged.popitem(last=False)
        return have

    def goal_probabilities(self, text: str) -> dict[str, float]:
        """goal -> P(the text asks for it); empty without a goal head."""
        if self._goal_right is None or not text.strip():
            return {}
        p = self.goal.probabilities(self.encoded(text).sentence[None, :], self._goal_right)[0]
        return {g: float(x) for g, x in zip(self.goals, p)}

    def value_probabilities(self, text: str, spans: list[tuple[int, int]], argument: str) -> list[float]:
        """P(each span is the argument's value) in the text, by the slot head (by the tagger where there is
        no slot head); ones without either."""
        if self._slot_right is None and self.tagger is not None and argument in self.arguments and spans \
                and text.strip():
            return self.rival_probabilities(text, spans, argument)
        if self._slot_right is None or argument not in self.arguments or not spans:
            return [1.0] * len(spans)
        encoded = self.encoded(text)
        x = np.stack([span_features(encoded, a, b) for a, b in spans])
        k = self.arguments.index(argument)
        column = tuple(side[k:k + 1] for side in self._slot_right)
        return [float(p) for p in self.slot.probabilities(x, column)[:, 0]]

    def rival_probabilities(self, text: str, spans: list[tuple[int, int]], argument: str) -> list[float]:
        """P(each span is the argument's value) by the tagger, which reads the argument's words and the
        text together: what decides between arguments that claim the same words (`values.link_values`).
        The slot head's where there is no tagger."""
        if self.tagger is None or argument not in self.arguments or not spans or not text.strip():
            return self.value_probabilities(text, spans, argument)
        tagged = self.tagged(text, [argument])
        k = tagged.arguments.index(argument)
        return [tagged.probability(k, a, b) for a, b in spans]

    def goal_probabilities_of_the_words_around_names(self, text: str) -> dict[str, float]:
        """The goal head on the text without the names the span head reads as values ("a movie with Ann
        Lee" -> "a movie with"): a name the encoder never saw pulls the whole text's vector away from
        every goal, while the words around it still ask for one. Empty when no name is read."""
        names = [p for p in self.proposals(text) if any(w[:1].isupper() for w in text[p.start:p.end].split())
                 and p.start > 0]
        if not names:
            return {}
        kept, last = [], 0
        for p in names:
            kept.append(text[last:p.start])
            last = p.end
        return self.goal_probabilities(" ".join("".join(kept + [text[last:]]).split()))

    def proposals(self, text: str) -> list[Proposal]:
        """The runs of words the span head (the tagger where there is no span head) reads as a value; none
        without either."""
        head = span_head()
        if head is None and self.tagger is not None:
            return [Proposal(a, b, p) for a, b, p in self.tagged(text).runs()] if text.strip() else []
        return head.proposals(self.encoded(text)) if head is not None and text.strip() else []

    @property
    def value_threshold(self) -> float:
        return self.slot.threshold if self.slot else TAGGER_THRESHOLD if self.tagger is not None else 0.5

    @property
    def goal_threshold(self) -> float:
        return self.goal.threshold if self.goal else 0.5


def learned_parts(pack) -> dict[str, bool]:
    """Which heads take part for this pack: the goal head when it is on; the slot head when it is on and
    the pack has no example requests (`values.link_values` says why), and the span head with it; with
    them, where one is trained, the argument tagger (`tagger`: it decides between arguments that claim
    the same words, and stands in for a missing slot or span head).
    Nothing is encoded to tell."""
    s = settings()
    reads = tagger() is not None
    value = s.learned_values and (slot_head() is not None or reads) and not pack.has_examples()
    return {"goal": s.learned_goals and goal_head() is not None, "value": value,
            "span": value and (span_head() is not None or reads), "tagger": value and reads}


_linkers: dict[tuple, Linker] = {}
_lock = threading.Lock()


def linker_for(pack) -> Linker:
    """The pack's linker, built once per process and again when the pack file changes."""
    key = (str(pack.yaml_path), pack.yaml_path.stat().st_mtime_ns, id(goal_head()), id(slot_head()), id(tagger()))
    with _lock:
        found = _linkers.get(key)
    if found is None:
        found = Linker(pack)
        with _lock:
            _linkers[key] = found
    return found
