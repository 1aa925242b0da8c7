"""The retrieval encoder of imported APIs: the packaged MiniLM with LoRA adapters (`peft`) trained on
requests people write to many REST APIs (`language.rest_corpus`), so that "throw out book 12" lands near
"remove book: Remove a book (book id)" in an API nobody trained on.

The packaged model was trained to place sentences that say the same thing near each other; a request and
the operation that serves it seldom say the same thing (a customer says "cancel my 3pm", an operation's
summary says "Delete an appointment"). The adapters learn that step from pairs of many APIs at once, with
each API's other operations as the negatives that matter (`MultipleNegativesRankingLoss` with a hard
negative), so a new API needs no training of its own. They are about 1.4 MB, shipped under `weights/`, and
loaded over the packaged model where a REST pack has no retriever trained for it (`retrievers.build_retriever`).
Trained by `nesyplan train-api-retriever`; an API held out of training (`--exclude`) is what it is judged on.

>>> pairs = training_triples(RestCorpus(
...     goals={"shop": {"add": "add order", "rm": "remove order"}, "zoo": {"feed": "feed animal"}},
...     requests=[RestRequest("shop", "cancel order 4", ["rm"]), RestRequest("zoo", "open today?", [])]),
...     exclude=set(), seed=0)
>>> pairs
[('cancel order 4', 'remove order', 'add order')]
"""

from __future__ import annotations

import json
import random
import tempfile
import threading
import time
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from pipeline.language.encoder import embedding_model, packaged_embedding_model
from pipeline.language.rest_corpus import RestCorpus, RestRequest  # noqa: F401 (the doctest's)
from pipeline.retrieval.contrastive import fit_contrastive

ADAPTER = Path(__file__).parent / "weights" / "api_retrieval"
TRAINED_PIECES = 128  # an operation's words past this say little of which it is, and cost a CPU much to learn from
LORA = {"r": 8, "lora_alpha": 16, "lora_dropout": 0.1, "target_modules": ["query", "key", "value", "dense"]}
CALIBRATION = "calibration.json"  # beside the adapters: the threshold shift and the cross-validation's figures
EPOCHS = 4  # over 2, the held-out APIs' right operation first 65.6% -> 70.8% (measurements.md)


@dataclass
class ApiRetrieverReport:
    triples: int
    apis: int
    seconds: float
    saved_to: str
    cross_validation: dict | None = None  # on APIs held out of training, the packaged model's and the trained one's


def training_triples(corpus: RestCorpus, exclude: set[str], seed: int,
                     nearness=None) -> list[tuple[str, str, str]]:
    """(request, the words of an operation it needs, the words of another operation of its API) for every
    request to an API not in `exclude` that needs one or more operations; out-of-scope requests pair with
    nothing (a triple needs a positive). The other operation is the one `nearness(request, words)` scores
    highest (the one the model confuses it with, what there is to learn), else one drawn at random."""
    rng = random.Random(seed)
    triples = []
    for request in corpus.requests:
        if request.api in exclude or not request.goals:
            continue
        words = corpus.goals[request.api]
        others = sorted(g for g in words if g not in request.goals)
        if not others:
            continue
        if nearness is not None:  # every operation of the API scored, the same list for each of its requests
            names = sorted(words)
            scores = dict(zip(names, nearness(request.text, [words[g] for g in names])))
            other = max(others, key=scores.__getitem__)
        for goal in request.goals:
            triples.append((request.text, words[goal], words[other if nearness is not None else rng.choice(others)]))
    return triples


def _nearness(model):
    """How near the model places a text to each of some words (cosine), for the hard negatives. The words
    (all of an API's operations) are encoded once, not once per request."""
    @lru_cache(maxsize=64)
    def encoded(words: tuple[str, ...]):
        return model.encode(list(words), normalize_embeddings=True, show_progress_bar=False)

    def score(text: str, words: list[str]) -> list[float]:
        return list(encoded(tuple(words)) @ model.encode(text, normalize_embeddings=True, show_progress_bar=False))
    return score


def train_api_retriever(corpus: RestCorpus, threshold: float, out: Path = ADAPTER, exclude: set[str] = frozenset(),
                        epochs: int = EPOCHS, batch_size: int = 32, seed: int = 0, folds: int = 3,
                        rows_out: Path | None = None, progress=lambda _m: None) -> ApiRetrieverReport:
    """Fit the adapters on the corpus' requests (those of APIs in `exclude` left out) and write them to
    `out` (peft's adapter files), after measuring them by `folds`-fold cross-validation over the APIs
    (0: none): each fold's APIs held out of a training of their own, then ranked by it. What that measures
    also sets the trained encoder's threshold against the packaged model's `threshold` (`dense_shift`),
    written beside the adapters. `rows_out`: where each held-out request's ranking goes (JSON), to judge
    the folds on a part of the APIs (those added since an earlier training, say)."""
    started = time.perf_counter()
    measured = None
    if folds > 1:
        apis = sorted(a for a in corpus.goals if a not in exclude)
        measured = []
        for k in range(folds):
            held = {a for i, a in enumerate(apis) if i % folds == k}
            progress(f"fold {k + 1}/{folds}: training without {len(held)} APIs")
            with tempfile.TemporaryDirectory(prefix="nesyplan-api-fold-") as scratch:
                _fit(corpus, Path(scratch), set(exclude) | held, epochs, batch_size, seed)
                measured += ranked_held_out(corpus, held, _load(Path(scratch)))
        if rows_out:
            rows_out.write_text(json.dumps(measured, indent=1) + "\n", encoding="utf-8")
    progress("training on every API")
    triples = _fit(corpus, out, set(exclude), epochs, batch_size, seed)
    figures = cross_validation_figures(measured, threshold) if measured else None
    (out / CALIBRATION).write_text(json.dumps({"dense_shift": figures["dense_shift"] if figures else 0.0,
                                               "cross_validation": figures}, indent=1) + "\n", encoding="utf-8")
    _adapted.clear()
    return ApiRetrieverReport(triples=triples, apis=len({r.api for r in corpus.requests} - set(exclude)),
                              seconds=round(time.perf_counter() - started, 1), saved_to=str(out),
                              cross_validation=figures)


def _fit(corpus: RestCorpus, out: Path, exclude: set[str], epochs: int, batch_size: int, seed: int) -> int:
    from peft import LoraConfig, get_peft_model

    model = embedding_model(packaged_embedding_model(), fresh=True)
    triples = training_triples(corpus, exclude, seed, _nearness(model))
    if not triples:
        raise ValueError("no request to learn from: the corpus is empty or every API is excluded")
    random.Random(seed).shuffle(triples)
    adapted = get_peft_model(model[0].auto_model, LoraConfig(**LORA))  # the adapters go into its layers
    model.max_seq_length = TRAINED_PIECES
    fit_contrastive(model, {"anchor": [a for a, _, _ in triples], "positive": [p for _, p, _ in triples],
                            "negative": [n for _, _, n in triples]}, epochs, batch_size, 2e-4, seed)
    out.mkdir(parents=True, exist_ok=True)
    adapted.save_pretrained(str(out))  # the adapters alone, in peft's files
    return len(triples)


def ranked_held_out(corpus: RestCorpus, held: set[str], model) -> list[dict]:
    """Each request to a held-out API ranked against its API's operations by the packaged model and by
    `model`: its operations, the best of each and the best score of each."""
    packaged = embedding_model()
    rows = []
    for api in sorted(held):
        goals = sorted(corpus.goals[api])
        words = [corpus.goals[api][g] for g in goals]
        requests = [r for r in corpus.requests if r.api == api]
        row_of = {}
        for name, encoder in (("packaged", packaged), ("trained", model)):
            ops = encoder.encode(words, normalize_embeddings=True, show_progress_bar=False)
            asked = encoder.encode([r.text for r in requests], normalize_embeddings=True, show_progress_bar=False)
            scores = asked @ ops.T
            for k, request in enumerate(requests):
                row = row_of.setdefault(k, {"api": api, "goals": request.goals})
                row[name] = {"best": goals[int(scores[k].argmax())], "score": float(scores[k].max())}
        rows += [row_of[k] for k in sorted(row_of)]
    return rows


def cross_validation_figures(rows: list[dict], packaged_threshold: float) -> dict:
    """Top-1 of one-operation requests, and the trained encoder's threshold shift: where it takes in as
    many of the held-out APIs' requests as the packaged model does at its threshold, and how many
    out-of-scope requests each then refuses."""
    import numpy as np


    one = [r for r in rows if len(r["goals"]) == 1]
    inside = [r for r in rows if r["goals"]]
    outside = [r for r in rows if not r["goals"]]
    figures = {"apis": len({r["api"] for r in rows}), "one_operation": len(one), "out_of_scope": len(outside)}
    taken = np.mean([r["packaged"]["score"] >= packaged_threshold for r in inside]) if inside else 1.0
    trained_scores = np.array([r["trained"]["score"] for r in inside])
    trained_threshold = float(np.quantile(trained_scores, 1 - taken)) if inside else packaged_threshold
    figures["dense_shift"] = round(trained_threshold - packaged_threshold, 4)
    for name, t in (("packaged", packaged_threshold), ("trained", trained_threshold)):
        figures[name] = {"top1": round(float(np.mean([r[name]["best"] == r["goals"][0] for r in one])), 4) if one else None,
                         "taken_in": round(float(np.mean([r[name]["score"] >= t for r in inside])), 4) if inside else None,
                         "refused": round(float(np.mean([r[name]["score"] < t for r in outside])), 4) if outside else None}
    return figures


_adapted: dict[str, object] = {}
_lock = threading.Lock()


def has_adapter(folder: Path = ADAPTER) -> bool:
    return (folder / "adapter_config.json").is_file()


def api_retrieval_model(folder: Path = ADAPTER):
    """The packaged model with the adapters in `folder`, loaded once per process (a copy of its own: the
    language heads read the packaged model's vectors unchanged)."""
    key = str(folder)
    with _lock:
        if key not in _adapted:
            _adapted[key] = _load(folder)
        return _adapted[key]


def dense_shift(folder: Path = ADAPTER) -> float:
    """How much higher than the packaged model's the trained encoder's threshold is (`calibration.json`)."""
    path = folder / CALIBRATION
    return float(json.loads(path.read_text(encoding="utf-8")).get("dense_shift", 0.0)) if path.is_file() else 0.0


def _load(folder: Path):
    from peft import PeftModel

    model = embedding_model(packaged_embedding_model(), fresh=True)
    # merged into the weights: the adapted model costs what the packaged one does
    model[0].auto_model = PeftModel.from_pretrained(model[0].auto_model, str(folder)).merge_and_unload()
    model.eval()
    return model

