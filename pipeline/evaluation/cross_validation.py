"""`nesyplan eval-sgd-cv`: leave-services-out cross-validation on SGD train, the figure to steer by.

SGD dev measures a change only once: rules looked at while reading its failures are fitted to it. Here the
train split's services are cut into folds by domain (the name before `_`: every restaurant service in one
fold), so a fold holds out domains, not just services whose siblings were learned from. For each fold:

1. the learned parts (goal, slot and span heads; other names of values) are trained on the other folds'
   services only (`language.train.fit_heads`, `learn_aliases`), the corpus encoded once for every fold;
2. the held-out services are imported as packs with those parts (a pack's synonyms come from the learned
   table) and played with `eval-sgd`'s openings, out-of-domain probes and conversations, in a fresh
   process that loads only that fold's heads.

The folds' counts are pooled (every service is held out by exactly one fold), so the CV figure weighs each
opening once. What this cannot hold out are rules already written while reading train failures: after this
yardstick, a rule is written while looking at one fold's failures and kept only if the others gain too.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import tempfile
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from pipeline.evaluation.sgd import evaluate_sgd, load_services
from pipeline.language.heads import GOAL_HEAD, SLOT_HEAD, SPAN_HEAD
from pipeline.language.sgd_corpus import domain
from pipeline.language.tagger import TAGGER
from pipeline.settings import settings
from pipeline.values.aliases import ALIASES_NAME

FOLD_FILE = "fold.json"
TAGGER_FILE = "tagger.json"
MADE = (GOAL_HEAD, SLOT_HEAD, SPAN_HEAD, ALIASES_NAME)  # what a fold's training writes


def make_folds(services: list[str], k: int) -> list[list[str]]:
    """The services in `k` folds, every service of a domain in the same one. Domains go largest first
    (then by name) to the fold with the fewest services so far (then the lowest number): deterministic,
    and the folds come out near the same size.

    >>> make_folds(["Buses_1", "Buses_2", "Events_1", "Hotels_1", "Hotels_2", "Hotels_3", "Media_1"], 2)
    [['Hotels_1', 'Hotels_2', 'Hotels_3', 'Media_1'], ['Buses_1', 'Buses_2', 'Events_1']]
    """
    by_domain: dict[str, list[str]] = {}
    for s in sorted(services):
        by_domain.setdefault(domain(s), []).append(s)
    if not 2 <= k <= len(by_domain):
        raise ValueError(f"{k} folds of {len(by_domain)} domains: choose between 2 and {len(by_domain)}")
    folds: list[list[str]] = [[] for _ in range(k)]
    for name in sorted(by_domain, key=lambda d: (-len(by_domain[d]), d)):
        smallest = min(range(k), key=lambda i: (len(folds[i]), i))
        folds[smallest] += by_domain[name]
    return [sorted(f) for f in folds]


def _fold_key(held: list[str], epochs: int, seed: int, corpus: str) -> dict:
    return {"held_out": held, "epochs": epochs, "seed": seed, "corpus": corpus}


def _trained(folder: Path, key: dict) -> dict | None:
    """The report of the fold's heads when they are there and were trained for this fold, these settings
    and this corpus; else None."""
    try:
        made = json.loads((folder / FOLD_FILE).read_text("utf-8"))
    except (OSError, ValueError):
        return None
    return made.get("heads") if made.get("key") == key and all((folder / f).is_file() for f in MADE) else None


def train_folds(train: Path, folds: list[list[str]], work: Path, which: list[int], epochs: int = 6, seed: int = 0,
                max_dialogues: int | None = None, progress: Callable[[str], None] = lambda _m: None,
                tagger_examples: int = 0) -> dict[int, dict]:
    """The heads of the folds `which` under `work/foldN`, each trained without its fold's services (and the
    argument tagger on `tagger_examples` examples, when that is not 0: `train_fold_taggers`). Folds
    already trained there with the same settings are kept (training is deterministic: they would come out
    the same). Returns each fold's head report."""
    from pipeline.language.train import collect, fit_heads, learn_aliases

    corpus_id = f"{train.resolve()}:{max_dialogues}"
    reports = {i: made for i in which
               if (made := _trained(work / f"fold{i}", _fold_key(folds[i], epochs, seed, corpus_id))) is not None}
    todo = [i for i in which if i not in reports]
    if todo:
        corpus = collect(train, max_dialogues, 0.1, seed, progress)
        for i in todo:
            folder = work / f"fold{i}"
            progress(f"fold {i}: training without {', '.join(folds[i])}")
            report = fit_heads(corpus, folder, set(folds[i]), epochs, seed, progress)
            learn_aliases(train, folder / ALIASES_NAME, max_dialogues, set(folds[i]))
            reports[i] = {"goal": report.goal.__dict__, "slot": report.slot.__dict__, "span": report.span.__dict__}
            (folder / FOLD_FILE).write_text(json.dumps(
                {"key": _fold_key(folds[i], epochs, seed, corpus_id), "heads": reports[i]}, indent=1), "utf-8")
        del corpus
    if tagger_examples:
        for i, report in train_fold_taggers(train, folds, work, which, tagger_examples, seed, max_dialogues,
                                            progress).items():
            reports[i] = {**reports[i], "tagger": report}
    return {i: reports[i] for i in which}


def train_fold_taggers(train: Path, folds: list[list[str]], work: Path, which: list[int], examples: int,
                       seed: int = 0, max_dialogues: int | None = None,
                       progress: Callable[[str], None] = lambda _m: None) -> dict[int, dict]:
    """Each fold's argument tagger beside its heads, kept (with a key of its own, `TAGGER_FILE`) while the
    fold and the settings are the same: a fold's heads serve runs with and without a tagger."""
    from pipeline.language.train_tagger import train_argument_tagger

    reports = {}
    for i in which:
        folder = work / f"fold{i}"
        key = {"held_out": folds[i], "examples": examples, "seed": seed, "corpus": f"{train.resolve()}:{max_dialogues}"}
        try:
            made = json.loads((folder / TAGGER_FILE).read_text("utf-8"))
        except (OSError, ValueError):
            made = {}
        if made.get("key") == key and (folder / TAGGER).is_file():
            reports[i] = made["report"]
            continue
        progress(f"fold {i}: training the argument tagger without {', '.join(folds[i])}")
        reports[i] = train_argument_tagger(train, folder, set(folds[i]), examples, max_dialogues, seed,
                                           progress).__dict__
        (folder / TAGGER_FILE).write_text(json.dumps({"key": key, "report": reports[i]}, indent=1), "utf-8")
    return reports


def _evaluate_fold(train: Path, held: list[str], learned_from: list[str], heads: Path,
                   importer: Callable[[Path, Path, list[str]], object], options: dict, tagger: bool = False) -> dict:
    """In a fresh process: the fold's heads and table are the only ones it loads (its tagger too, when
    the run trains taggers; a tagger left there by another run is not read)."""
    os.environ["NESYPLAN_LANGUAGE_WEIGHTS"] = str(heads)
    os.environ["NESYPLAN_LEARNED_TAGGER"] = "true" if tagger else "false"
    settings.cache_clear()  # read again, with the fold's heads
    with tempfile.TemporaryDirectory(prefix="nesyplan-cv-") as packs:
        importer(train / "schema.json", Path(packs), held)
        return evaluate_sgd(train, Path(packs), services=held, learned_from=set(learned_from), **options)


def pooled(summaries: list[dict]) -> dict:
    """The folds' overall counts added up, and the rates of the sums."""
    keys = ("openings", "probes", "conversations")
    totals = {k: sum(s["by"]["all"][k] for s in summaries if "all" in s["by"]) for k in keys}
    counts: dict[str, int] = {}
    for s in summaries:
        for k, v in s["by"].get("all", {}).get("counts", {}).items():
            counts[k] = counts.get(k, 0) + v

    def rate(part: str, whole: int) -> float | None:
        return round(counts.get(part, 0) / whole, 4) if whole else None
    return {**totals, "openings_exact": rate("exact", totals["openings"]),
            "goal_accuracy": rate("goal_right", totals["openings"]),
            "slot_precision": rate("true_values", counts.get("given_values", 0)),
            "slot_recall": rate("true_values", counts.get("gold_values", 0)),
            "ood_refused": rate("refused", totals["probes"]),
            "conversation_success": rate("succeeded", totals["conversations"]), "counts": counts}


def cross_validate(train: Path, importer: Callable[[Path, Path, list[str]], object], k: int = 3,
                   only: list[int] | None = None, work: Path | None = None, epochs: int = 6, seed: int = 0,
                   max_dialogues: int | None = None, options: dict | None = None,
                   progress: Callable[[str], None] = lambda _m: None, tagger_examples: int = 0) -> dict:
    """Train each fold's heads without its services, then play its services against them. `importer`
    (schema, packs folder, services) writes packs (the caller's: evaluation writes none); `options` go to
    `evaluate_sgd` (limit, probes, conversations, translator ...); `only`: the fold numbers to train and
    play (the folds are cut from every service whichever are played, so fold 1 is the same fold alone)."""
    services = list(load_services(train / "schema.json"))
    folds = make_folds(services, k)
    chosen = list(range(k)) if only is None else sorted(set(only))
    if any(not 0 <= i < k for i in chosen):
        raise ValueError(f"fold numbers are 0 to {k - 1}")
    with tempfile.TemporaryDirectory(prefix="nesyplan-cv-heads-") as scratch:
        root = work or Path(scratch)
        heads = train_folds(train, folds, root, chosen, epochs, seed, max_dialogues, progress, tagger_examples)
        results = []
        spawn = multiprocessing.get_context("spawn")
        for i in chosen:
            progress(f"fold {i}: playing {', '.join(folds[i])}")
            learned_from = [s for s in services if s not in folds[i]]
            with ProcessPoolExecutor(max_workers=1, mp_context=spawn) as pool:
                summary = pool.submit(_evaluate_fold, train, folds[i], learned_from, root / f"fold{i}", importer,
                                      options or {}, tagger_examples > 0).result()
            results.append({"fold": i, "held_out": folds[i], "heads": heads[i], "summary": summary})
    return {"data": str(train), "folds": k, "played": chosen, "by_domain": True, "epochs": epochs, "seed": seed,
            "tagger_examples": tagger_examples,
            "options": options or {}, "cv": pooled([r["summary"] for r in results]), "per_fold": results}
