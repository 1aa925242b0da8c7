"""`nesyplan train-language`: train the goal and slot heads on SGD train (and SGD-X's re-worded train
schemas), write them under `weights/` (with the other names of values: `values/aliases.yaml`), and
report how they do on turns held out, and on services held out when some are (`exclude_services`: what
the heads do on services they never saw).

Deterministic for a given corpus and seed; a few minutes on 2 CPU cores (most of it encoding the turns).
Learned parts train on SGD train only: dev is what they are measured on (`eval-sgd`).
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from pipeline.language.encoder import encode, sentence_vectors
from pipeline.language.heads import GOAL_HEAD, SLOT_HEAD, SPAN_HEAD, WEIGHTS, reload, span_features
from pipeline.language.sgd_corpus import (dialogues_of, goal_pairs, read_aliases, read_turns, read_value_words,
                                          read_wordings, schemas_of, slot_pairs)
from pipeline.language.rest_corpus import RestCorpus, read_corpus
from pipeline.language.tagger import TAGGER
from pipeline.language.spans import Proposal, SpanHead, piece_features, piece_labels
from pipeline.packs.sgd_schema import load_schema
from pipeline.values.aliases import ALIASES_FILE, ALIASES_NAME, write_aliases

HIDDEN, MIX = 128, 64


@dataclass
class HeadReport:
    pairs: int
    held_out: dict = field(default_factory=dict)  # precision, recall, accuracy on held-out turns
    unseen_services: dict = field(default_factory=dict)  # the same on services not learned from


@dataclass
class LanguageReport:
    turns: int
    seconds: float
    goal: HeadReport | None = None
    slot: HeadReport | None = None
    span: HeadReport | None = None
    tagger: dict | None = None  # the argument tagger's report (`train_tagger.TaggerReport`), when one is trained
    written: list[str] = field(default_factory=list)


@dataclass
class Pairs:
    """One head's pairs as arrays: left rows, the index of each one's right row, labels, and the turn
    each row comes from (which rows are learned from is chosen per turn: `Corpus.groups`)."""
    x: np.ndarray
    right: np.ndarray
    index: np.ndarray
    labels: np.ndarray
    turn: np.ndarray


@dataclass
class Tagged:
    """The span head's rows: each word piece's features, label and turn, and, for the turns held out of
    every training (`Corpus.held`), their encoding (to score spans on) and value spans."""
    x: np.ndarray
    labels: np.ndarray
    turn: np.ndarray
    turns: list = field(default_factory=list)  # (turn, Encoded, value spans)


@dataclass
class Corpus:
    """SGD train encoded once. Which rows a training learns from is chosen afterwards (`groups`), so the
    folds of a cross-validation share one encoding, the slow part."""
    goal: Pairs
    slot: Pairs
    tagged: Tagged
    services: list[str]      # per turn
    held: np.ndarray         # per turn: held out of every training (a share of turns, drawn once)

    def groups(self, exclude: set[str]) -> np.ndarray:
        """Per turn: 0 learned from, 1 a held-out turn, 2 a turn of a service not learned from."""
        excluded = np.array([s in exclude for s in self.services], bool)
        return np.where(excluded, 2, np.where(self.held, 1, 0))


def collect(train: Path, max_dialogues: int | None, held_out: float, seed: int,
            progress=lambda _m: None, rest: RestCorpus | None = None) -> Corpus:
    """Encode the corpus' turns once and make the three heads' rows; `rest`'s requests add goal rows
    after SGD's turns (the goal head only: they mark no values), each API a service of its own."""
    services = {s.service_name: s for s in load_schema(train / "schema.json")}
    wordings = read_wordings(schemas_of(train))
    turns = read_turns(dialogues_of(train, max_dialogues), services, seed=seed)
    rng = random.Random(seed)
    held = np.zeros(len(turns), bool)
    held[rng.sample(range(len(turns)), int(len(turns) * held_out))] = True
    goals, slots = goal_pairs(turns, wordings, seed=seed), slot_pairs(turns, wordings, seed=seed)
    by_turn: dict[int, list] = {}
    for p in slots:
        by_turn.setdefault(p.turn, []).append(p)
    sentence = np.zeros((len(turns), 384), np.float32)
    slot_x, slot_rows = [], []
    tag_x, tag_labels, tag_turn, tag_turns = [], [], [], []
    for k in range(0, len(turns), 512):
        for j, e in enumerate(encode([t.text for t in turns[k:k + 512]])):
            sentence[k + j] = e.sentence
            for p in by_turn.get(k + j, []):
                slot_x.append(span_features(e, p.start, p.end))
                slot_rows.append(p)
            values = sorted({(a, b) for a, b, _ in turns[k + j].spans})
            tag_x.append(piece_features(e.pieces).astype(np.float16))
            tag_labels.append(piece_labels(e.offsets, values))
            tag_turn.append(np.full(len(e.pieces), k + j))
            if held[k + j]:
                tag_turns.append((k + j, e, values))
        progress(f"encoded {min(k + 512, len(turns))}/{len(turns)} turns")

    def pairs(rows, x) -> Pairs:
        texts = sorted({p.text for p in rows})
        where = {t: i for i, t in enumerate(texts)}
        return Pairs(x.astype(np.float32), sentence_vectors(texts), np.array([where[p.text] for p in rows]),
                     np.array([p.label for p in rows], np.float32), np.array([p.turn for p in rows]))

    tagged = Tagged(np.concatenate(tag_x), np.concatenate(tag_labels), np.concatenate(tag_turn), tag_turns)
    corpus = Corpus(pairs(goals, sentence[[p.turn for p in goals]]), pairs(slot_rows, np.stack(slot_x)), tagged,
                    [t.service for t in turns], held)
    return with_rest(corpus, rest, held_out, seed, progress) if rest is not None and rest.requests else corpus


def with_rest(corpus: Corpus, rest: RestCorpus, held_out: float, seed: int, progress=lambda _m: None) -> Corpus:
    """The corpus with goal rows of requests to REST APIs after its turns, each API a service of its own
    (`rest_corpus`); a share of them held out as SGD's turns are."""
    texts, rows = rest.pairs(first_turn=len(corpus.services), seed=seed)
    progress(f"encoding {len(texts)} requests to REST APIs")
    sentence = sentence_vectors(texts)
    words = sorted({p.text for p in rows})
    where = {w: corpus.goal.right.shape[0] + i for i, w in enumerate(words)}
    goal = Pairs(np.concatenate([corpus.goal.x, sentence[[p.turn - len(corpus.services) for p in rows]]]),
                 np.concatenate([corpus.goal.right, sentence_vectors(words)]),
                 np.concatenate([corpus.goal.index, np.array([where[p.text] for p in rows])]),
                 np.concatenate([corpus.goal.labels, np.array([p.label for p in rows], np.float32)]),
                 np.concatenate([corpus.goal.turn, np.array([p.turn for p in rows])]))
    held = np.zeros(len(texts), bool)
    held[random.Random(seed).sample(range(len(texts)), int(len(texts) * held_out))] = True
    return Corpus(goal, corpus.slot, corpus.tagged, corpus.services + rest.services(),
                  np.concatenate([corpus.held, held]))


def _module(left: int, right: int, tied: bool):
    import torch

    class Head(torch.nn.Module):
        """The torch twin of `heads.PairHead` (same layers, same features)."""

        def __init__(self):
            super().__init__()
            self.left = torch.nn.Linear(left, HIDDEN)
            self.right = self.left if tied else torch.nn.Linear(right, HIDDEN)
            self.mix = torch.nn.Linear(2 * HIDDEN + 1, MIX)
            self.out = torch.nn.Linear(MIX, 1)
            self.drop = torch.nn.Dropout(0.1)

        def forward(self, x, y):
            a, b = torch.relu(self.left(x)), torch.relu(self.right(y))
            cosine = torch.nn.functional.cosine_similarity(x[:, :y.shape[1]], y, dim=1)[:, None]
            z = self.drop(torch.cat([a * b, (a - b).abs(), cosine], dim=1))
            return self.out(torch.relu(self.mix(z))).squeeze(1)

    return Head()


def fit(pairs: Pairs, group: np.ndarray, epochs: int, seed: int, tied: bool):
    """Train a pair head on the rows of group 0 (`group`: per row)."""
    import torch

    torch.manual_seed(seed)
    learn = group == 0
    x, index, labels = (torch.from_numpy(a[learn]) for a in (pairs.x, pairs.index, pairs.labels))
    table = torch.from_numpy(pairs.right)
    head = _module(pairs.x.shape[1], pairs.right.shape[1], tied)
    positive = float(labels.mean()) or 0.5
    loss_fn = torch.nn.BCEWithLogitsLoss(pos_weight=torch.tensor((1 - positive) / positive))
    _descend(head, len(x), epochs, 256, seed, lambda batch: loss_fn(head(x[batch], table[index[batch]]), labels[batch]))
    return head


def _descend(model, rows: int, epochs: int, batch: int, seed: int, loss_of) -> None:
    """Adam over shuffled mini-batches of row indices; `loss_of(indices)` is a batch's loss."""
    import torch

    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3, weight_decay=1e-4)
    rng = np.random.default_rng(seed)
    model.train()
    for _ in range(epochs):
        order = torch.from_numpy(rng.permutation(rows))
        for k in range(0, rows, batch):
            optimizer.zero_grad()
            loss_of(order[k:k + batch]).backward()
            optimizer.step()
    model.eval()


def weights(head, tied: bool) -> dict[str, np.ndarray]:
    """The head's layers as the arrays `PairHead` reads (x @ w + b), in float16."""
    import torch

    out = {"tied": np.array(tied)}
    for name, layer in head.named_children():  # a tied head's right layer is its left one: named once
        if not isinstance(layer, torch.nn.Linear):  # its dropout holds no weights
            continue
        out[f"w_{name}"] = layer.weight.detach().numpy().T.astype(np.float16)
        out[f"b_{name}"] = layer.bias.detach().numpy().astype(np.float16)
    return out


def measure(head, pairs: Pairs, group: np.ndarray, which: int, threshold: float = 0.5) -> dict:
    import torch

    rows = group == which
    if not rows.any():
        return {}
    with torch.no_grad():
        p = torch.sigmoid(head(torch.from_numpy(pairs.x[rows]),
                               torch.from_numpy(pairs.right)[torch.from_numpy(pairs.index[rows])])).numpy()
    labels = pairs.labels[rows] == 1
    said = p >= threshold
    tp = int((said & labels).sum())
    return {"pairs": int(rows.sum()), "precision": round(tp / max(int(said.sum()), 1), 4),
            "recall": round(tp / max(int(labels.sum()), 1), 4), "accuracy": round(float((said == labels).mean()), 4)}


def tagger_module(width: int):
    """The span head's torch twin: features -> hidden -> O/B/I logits."""
    import torch

    return torch.nn.Sequential(torch.nn.Linear(width, HIDDEN), torch.nn.ReLU(), torch.nn.Dropout(0.1),
                               torch.nn.Linear(HIDDEN, 3))


def tagger_weights(model) -> dict[str, np.ndarray]:
    """The twin's layers as the arrays `SpanHead` reads (x @ w + b), in float16."""
    return {"w_in": model[0].weight.detach().numpy().T.astype(np.float16),
            "b_in": model[0].bias.detach().numpy().astype(np.float16),
            "w_out": model[3].weight.detach().numpy().T.astype(np.float16),
            "b_out": model[3].bias.detach().numpy().astype(np.float16)}


def fit_tagger(tagged: Tagged, group: np.ndarray, epochs: int, seed: int) -> dict[str, np.ndarray]:
    import torch

    torch.manual_seed(seed)
    learn = group == 0
    x, labels = torch.from_numpy(tagged.x[learn]), torch.from_numpy(tagged.labels[learn])
    model = tagger_module(x.shape[1])
    loss_fn = torch.nn.CrossEntropyLoss()
    _descend(model, len(x), epochs, 512, seed, lambda batch: loss_fn(model(x[batch].float()), labels[batch]))
    return tagger_weights(model)


def measure_spans(head: SpanHead, tagged: Tagged, groups: np.ndarray, which: int) -> dict:
    """Proposed spans against the held turns' value spans, exactly (precision, recall) and by overlap
    (recall); `groups`: per turn."""
    proposed = gold = exact = touched = 0
    for turn, encoded, values in tagged.turns:
        if groups[turn] != which:
            continue
        found: list[Proposal] = head.proposals(encoded)
        spans = {(p.start, p.end) for p in found}
        proposed, gold = proposed + len(spans), gold + len(values)
        exact += len(spans & set(values))
        touched += sum(any(p.start < b and a < p.end for p in found) for a, b in values)
    if not gold:
        return {}
    return {"spans": gold, "precision": round(exact / max(proposed, 1), 4), "recall": round(exact / gold, 4),
            "overlap_recall": round(touched / gold, 4)}


def fit_heads(corpus: Corpus, out: Path, exclude: set[str], epochs: int, seed: int,
              progress=lambda _m: None) -> LanguageReport:
    """Train the three heads on the corpus' turns of services not in `exclude` (its held turns aside) and
    write them under `out`."""
    groups = corpus.groups(exclude)
    report = LanguageReport(turns=len(corpus.services), seconds=0.0)
    out.mkdir(parents=True, exist_ok=True)
    for name, pairs, tied, file in (("goal", corpus.goal, True, GOAL_HEAD), ("slot", corpus.slot, False, SLOT_HEAD)):
        group = groups[pairs.turn]
        progress(f"training the {name} head on {int((group == 0).sum())} pairs")
        head = fit(pairs, group, epochs, seed, tied)
        setattr(report, name, HeadReport(pairs=int((group == 0).sum()), held_out=measure(head, pairs, group, 1),
                                         unseen_services=measure(head, pairs, group, 2)))
        np.savez_compressed(out / file, **weights(head, tied), threshold=np.array(0.5), seed=np.array(seed))
        report.written.append(str(out / file))
    group = groups[corpus.tagged.turn]
    progress(f"training the span head on {int((group == 0).sum())} word pieces")
    span_weights = fit_tagger(corpus.tagged, group, epochs, seed)
    head = SpanHead(span_weights)
    report.span = HeadReport(pairs=int((group == 0).sum()), held_out=measure_spans(head, corpus.tagged, groups, 1),
                             unseen_services=measure_spans(head, corpus.tagged, groups, 2))
    np.savez_compressed(out / SPAN_HEAD, **span_weights, threshold=np.array(0.5), seed=np.array(seed))
    report.written.append(str(out / SPAN_HEAD))
    return report


def learn_aliases(train: Path, path: Path, max_dialogues: int | None = None, exclude: set[str] = frozenset()) -> Path:
    """Other names of values (places) and other words for listed values that hold across services, read
    from the dialogues of the services not in `exclude`."""
    services = {s.service_name: s for s in load_schema(train / "schema.json") if s.service_name not in exclude}
    table = read_aliases(dialogues_of(train, max_dialogues), services)
    words = read_value_words(dialogues_of(train, max_dialogues), services)
    return write_aliases(table, words, path)


def train_language(train: Path, out: Path = WEIGHTS, max_dialogues: int | None = None, epochs: int = 6,
                   held_out: float = 0.1, seed: int = 0, exclude_services: list[str] | None = None,
                   tagger_examples: int | None = 0, progress=lambda _message: None,
                   rest: Path | None = None) -> LanguageReport:
    """Train the heads on the split `train` (schema.json, dialogues_*.json[.gz]) and the goal head on the
    requests to REST APIs of `rest` too (`rest_corpus.REST_CORPUS`; None: SGD alone, as the shipped heads
    were trained: with them it is not yet measured on SGD's cross-validation), services in `exclude_services`
    (an API's: `rest:<api>`) left out of them and of the other names of values; and the argument tagger on
    `tagger_examples` examples, when that is not 0 (None: as many as the machine trains in minutes,
    `train_tagger.train_argument_tagger`)."""
    started = time.perf_counter()
    exclude = set(exclude_services or [])
    corpus = collect(train, max_dialogues, held_out, seed, progress, read_corpus(rest) if rest else None)
    report = fit_heads(corpus, out, exclude, epochs, seed, progress)
    report.written.append(str(learn_aliases(train, ALIASES_FILE if out == WEIGHTS else out / ALIASES_NAME,
                                            max_dialogues, exclude)))
    if tagger_examples != 0:
        from pipeline.language.train_tagger import train_argument_tagger

        report.tagger = train_argument_tagger(train, out, exclude, tagger_examples, max_dialogues, seed,
                                              progress).__dict__
        report.written.append(str(out / TAGGER))
    reload()
    report.seconds = round(time.perf_counter() - started, 1)
    return report
