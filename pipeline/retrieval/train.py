"""Fine-tune the embedding model for one pack (ProTIP §3.1): contrastive training on (request, goal) pairs.

Pairs come only from the pack's own example requests and, optionally, one labelled file the user gives
(JSONL records with `query` and `goals`, `intent` or `calls`); nothing else is read, so an evaluation set
can only reach training by being passed as that file. A held-out share of the pairs (every fifth pair, by
position: deterministic) is kept out of training and out of the retrieval index, and
Recall@k is measured on it before and after. The model is saved inside the pack (`<pack>/retriever/`),
where the retriever finds it.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from pipeline.packs.pack import Pack
from pipeline.retrieval.contrastive import fit_contrastive
from pipeline.retrieval.metrics import evaluate_retrieval, gold_goals
from pipeline.retrieval.retrievers import (TRAINED_DIR, DenseRetriever, embedding_model, goal_documents,
                                           packaged_embedding_model)

HELD_OUT_EVERY = 5


@dataclass
class TrainingReport:
    pairs: int
    held_out: int
    before: dict
    after: dict
    saved_to: str
    seconds: float


def labelled_requests(pack: Pack, train_file: Path | None) -> list[tuple[str, str]]:
    """(request, goal) pairs: each example of each goal, then the user's single-goal records."""
    pairs = [(example, name) for name, goal in pack.spec.goals.items() for example in goal.examples]
    if train_file is not None:
        with open(train_file, encoding="utf-8") as handle:
            for number, line in enumerate(handle, 1):
                if not line.strip():
                    continue
                try:
                    record = json.loads(line)
                    goals = gold_goals(record, pack)
                    query = record["query"]
                except (ValueError, KeyError, TypeError) as exc:
                    raise ValueError(f"{train_file}:{number}: not a labelled request ({exc})") from exc
                unknown = [g for g in goals if g not in pack.spec.goals]
                if unknown:
                    raise ValueError(f"{train_file}:{number}: goal(s) not in pack {pack.name}: {unknown}")
                if len(goals) == 1:  # a multi-goal request is no positive pair for one goal
                    pairs.append((query, goals[0]))
    return pairs


def split(pairs: list[tuple[str, str]]) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """Every HELD_OUT_EVERY-th pair is held out, its goal's other pairs kept for training."""
    train = [p for i, p in enumerate(pairs, 1) if i % HELD_OUT_EVERY]
    held = [p for i, p in enumerate(pairs, 1) if not i % HELD_OUT_EVERY]
    return train, held


def _recall(pack: Pack, model_path: str | None, held: list[tuple[str, str]]) -> dict:
    retriever = DenseRetriever(pack, model_path, exclude=frozenset(q for q, _ in held))
    figures = evaluate_retrieval([{"query": q, "goals": [g]} for q, g in held], retriever, "topk", 5)
    return {k: figures[k] for k in ("recall_at_1", "recall_at_5", "recall_at_10")}


def train_retriever(pack: Pack, train_file: Path | None = None, epochs: int = 3, batch_size: int = 16,
                    seed: int = 0, output: Path | None = None) -> TrainingReport:
    import time

    start = time.perf_counter()
    pairs = labelled_requests(pack, train_file)
    if not pairs:
        raise ValueError(f"pack {pack.name} has no example requests and no training file was given: "
                         "nothing to train on")
    train, held = split(pairs)
    before = _recall(pack, None, held) if held else {}
    summaries = dict(goal_documents(pack, frozenset(e for e, _ in pairs)))
    # A fresh copy of the packaged model: training must not change the one other packs use.
    model = embedding_model(packaged_embedding_model(), fresh=True)
    scratch = tempfile.mkdtemp(prefix="nesyplan-train-")
    try:
        # In-batch negatives: the other goals' summaries in the batch.
        fit_contrastive(model, {"anchor": [q for q, _ in train], "positive": [summaries[g] for _, g in train]},
                        epochs, batch_size, 2e-5, seed)
        output = output or pack.yaml_path.parent / TRAINED_DIR
        staged = Path(scratch) / "model"
        model.save(str(staged))
        if output.exists():
            shutil.rmtree(output)
        shutil.move(str(staged), str(output))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    after = _recall(pack, str(output), held) if held else {}
    return TrainingReport(pairs=len(train), held_out=len(held), before=before, after=after, saved_to=str(output),
                          seconds=round(time.perf_counter() - start, 1))

