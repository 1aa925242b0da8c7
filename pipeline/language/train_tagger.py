"""Training the argument tagger (`tagger.py`) on SGD train's user turns.

Each example is a turn and one argument of its service, in one of the schema's wordings drawn at random
(the original or an SGD-X re-wording, so no one name is what is learned), with the argument's value
spans tagged B/I and every other piece O:

- every argument the turn gives a value it writes (SGD's spans, and categorical values found written);
- up to `negatives` arguments of the same service it gives no value: first one whose name shares a word
  with an argument it does give (check-in vs check-out date: what tells alike arguments apart), then
  drawn at random. An argument the turn gives a value without writing it ("True" for a yes/no) is
  neither: its tags would say nothing true.

Deterministic on a CPU for a corpus, a seed and a thread count. On 2 CPU cores about `examples / 40`
seconds, with adapters on the top layers; where CUDA is present it trains there, with adapters on every
layer (`tagger.EVERY_LAYER`), and the weights file records which.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from pipeline.language.sgd_corpus import Turn, Wordings, dialogues_of, read_turns, read_wordings, schemas_of
from pipeline.language.spans import piece_labels
from pipeline.language.tagger import (BEGIN, EVERY_LAYER, INSIDE, LAYERS_KEY, TAGGER, TOP_LAYERS, build_model,
                                     encode_pairs, tokenizer)


CPU_EXAMPLES = 12000  # a default a CPU trains in minutes; a GPU takes every example (about 110,000)


def _device() -> str:
    """Where a tagger trains: CUDA where torch sees it (every example, every layer), else the CPU."""
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


@dataclass
class Example:
    argument: str  # its words
    text: str
    spans: list[tuple[int, int]]
    service: str


@dataclass
class TaggerReport:
    examples: int
    seconds: float
    held_out: dict  # piece accuracy and value-span precision / recall on examples held out of training


def _words(name: str) -> set[str]:
    return set(name.lower().split("_"))


def tagger_examples(turns: list[Turn], wordings: Wordings, negatives: int = 2, seed: int = 0) -> list[Example]:
    rng = random.Random(seed)
    out = []
    for turn in turns:
        texts = rng.choice(wordings.slots[turn.service])
        written: dict[str, list[tuple[int, int]]] = {}
        for start, end, slot in turn.spans:
            if slot in texts:
                written.setdefault(slot, []).append((start, end))
        out += [Example(texts[slot], turn.text, spans, turn.service) for slot, spans in written.items()]
        free = [s for s in texts if s not in written and s not in turn.informed]
        alike = [s for s in free if any(_words(s) & _words(w) for w in written)]
        picks = rng.sample(alike, min(1, len(alike)))
        rest = [s for s in free if s not in picks]
        picks += rng.sample(rest, min(negatives - len(picks), len(rest)))
        out += [Example(texts[slot], turn.text, [], turn.service) for slot in picks]
    return out


def _labels(offsets: np.ndarray, text_side: np.ndarray, examples: list[Example]) -> np.ndarray:
    """B/I/O per piece of each row's text (`spans.piece_labels`); -100 (not learned) for the argument's
    words and padding."""
    labels = np.full(text_side.shape, -100, np.int64)
    for row, example in enumerate(examples):
        labels[row, text_side[row]] = piece_labels(offsets[row][text_side[row]], example.spans)
    return labels


def _batches(tok, examples: list[Example], size: int):
    for i in range(0, len(examples), size):
        chunk = examples[i:i + size]
        enc, offsets, text_side = encode_pairs(tok, [e.argument for e in chunk], [e.text for e in chunk])
        yield chunk, enc, offsets, text_side, _labels(offsets, text_side, chunk)


def fit_argument_tagger(train: list[Example], held: list[Example], folder: Path, epochs: int = 1, batch: int = 32,
               learning_rate: float = 2e-3, seed: int = 0, bf16: bool = True, layers: tuple[int, ...] | None = None,
               progress=lambda _m: None) -> TaggerReport:
    """Train on `train`, measure on `held`, write the adapters and the tag layer to `folder`. On CUDA
    where it is present, else on the CPU; `layers`: those adapted (default: every one on CUDA, the top
    ones on a CPU)."""
    import torch
    from peft import get_peft_model_state_dict
    from safetensors.torch import save_file

    torch.manual_seed(seed)
    started = time.perf_counter()
    device = _device()
    layers = layers or (EVERY_LAYER if device == "cuda" else TOP_LAYERS)
    model = build_model(layers).to(device)
    tok = tokenizer()
    trainable = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(trainable, lr=learning_rate, weight_decay=0.01)
    steps = epochs * ((len(train) + batch - 1) // batch)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda k: min(1.0, (k + 1) / max(1, steps // 20)) * max(0.0, 1.0 - k / max(1, steps)))
    loss_fn = torch.nn.CrossEntropyLoss(ignore_index=-100)
    rng = random.Random(seed)
    order = list(train)
    done = 0
    model.train()
    for epoch in range(epochs):
        rng.shuffle(order)
        order.sort(key=lambda e: len(e.text) // 40)  # like lengths together: less padding
        chunks = list(_batches(tok, order, batch))
        rng.shuffle(chunks)
        for _chunk, enc, _offsets, _side, labels in chunks:
            with torch.autocast(device, dtype=torch.bfloat16, enabled=bf16):
                logits = model(**enc.to(device))
            loss = loss_fn(logits.float().reshape(-1, 3), torch.from_numpy(labels).to(device).reshape(-1))
            loss.backward()
            optimizer.step()
            schedule.step()
            optimizer.zero_grad()
            done += 1
            if done % 50 == 0:
                progress(f"tagger: step {done}/{steps}, loss {loss.item():.4f}, "
                         f"{time.perf_counter() - started:.0f} s")
    model.eval()
    report = TaggerReport(len(train), 0.0, _measure(model, tok, held, device))
    folder.mkdir(parents=True, exist_ok=True)
    save_file({k: v.detach().cpu().contiguous() for k, v in get_peft_model_state_dict(model).items()},
              str(folder / TAGGER), metadata={LAYERS_KEY: ",".join(map(str, layers))})
    report.seconds = round(time.perf_counter() - started, 1)
    return report


def _measure(model, tok, held: list[Example], device: str = "cpu") -> dict:
    """Piece accuracy, and exact value spans (B then I's) found vs tagged, on held-out examples."""
    import torch

    right = total = true = found = gold = 0
    with torch.inference_mode():
        for _chunk, enc, _offsets, _side, labels in _batches(tok, held, 64):
            best = model(**enc.to(device)).argmax(-1).cpu().numpy()
            mask = labels >= 0
            right += int((best[mask] == labels[mask]).sum())
            total += int(mask.sum())
            for row in range(len(labels)):
                ours, theirs = _runs(best[row], mask[row]), _runs(labels[row], mask[row])
                true += len(ours & theirs)
                found += len(ours)
                gold += len(theirs)
    return {"piece_accuracy": round(right / max(total, 1), 4), "precision": round(true / max(found, 1), 4),
            "recall": round(true / max(gold, 1), 4), "examples": len(held)}


def _runs(tags: np.ndarray, mask: np.ndarray) -> set[tuple[int, int]]:
    runs, i, n = set(), 0, len(tags)
    while i < n:
        if mask[i] and tags[i] == BEGIN:
            j = i + 1
            while j < n and mask[j] and tags[j] == INSIDE:
                j += 1
            runs.add((i, j))
            i = j
        else:
            i += 1
    return runs


def train_argument_tagger(train: Path, folder: Path, exclude: set[str] = frozenset(), examples: int | None = None,
                          max_dialogues: int | None = None, seed: int = 0, progress=lambda _m: None) -> TaggerReport:
    """The tagger trained on `examples` drawn from the turns of SGD train's services not in `exclude`
    (None: every one where CUDA is present, `CPU_EXAMPLES` where not), measured on examples of the excluded
    services (of all of them when none is), written to `folder`."""
    from pipeline.packs.sgd_schema import load_schema

    if examples is None:
        examples = 10 ** 9 if _device() == "cuda" else CPU_EXAMPLES

    services = {s.service_name: s for s in load_schema(train / "schema.json")}
    turns = read_turns(dialogues_of(train, max_dialogues), services, seed=seed)
    learn, held = split_examples(tagger_examples(turns, read_wordings(schemas_of(train)), seed=seed), exclude,
                                 examples, seed)
    progress(f"tagger: {len(learn)} examples, measured on {len(held)}")
    return fit_argument_tagger(learn, held, folder, seed=seed, progress=progress)


def split_examples(every: list[Example], exclude: set[str], examples: int,
                   seed: int = 0) -> tuple[list[Example], list[Example]]:
    """Up to `examples` examples drawn from the services not in `exclude`, and 400 to measure on: the
    excluded services' (every service's, other examples, when none is excluded)."""
    learn = [e for e in every if e.service not in exclude]
    unseen = [e for e in every if e.service in exclude]
    rng = random.Random(seed)
    rng.shuffle(learn)
    rng.shuffle(unseen)
    if unseen:
        return learn[:examples], unseen[:400]
    measured = min(400, len(learn) // 10)  # every example asked for: some are kept back to measure on
    return learn[:min(examples, len(learn) - measured)], learn[len(learn) - measured:]
