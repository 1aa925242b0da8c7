"""The learned parts: small heads on the encoder's vectors, each scoring a pair (a text, a pack's words).

A `PairHead` projects each side, multiplies the projections (what they share) and reads a probability
from both and their product. Two are trained (`train.py`) and shipped as weights under `weights/`:

- the goal head: a text's sentence vector and a goal's words -> the text asks for that goal;
- the slot head: a span (its pieces, the pieces around it, the text) and an argument's words -> the span
  is that argument's value.

Inference is numpy only (float32), a few microseconds per pair.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import numpy as np

from pipeline.language.encoder import Encoded
from pipeline.language.spans import SpanHead
from pipeline.language.weighted import Weighted
from pipeline.settings import settings

WEIGHTS = Path(__file__).parent / "weights"
GOAL_HEAD, SLOT_HEAD, SPAN_HEAD = "goal_head.npz", "slot_head.npz", "span_head.npz"


class PairHead(Weighted):
    """P(match) of a left row (a text or a span) and a right row (a pack's words), from how alike their
    projections are (their product and distance) and how alike the raw vectors are. It sees only
    likeness, never either side alone, so it cannot learn which services exist: what it learns carries to
    services it never saw."""

    def __init__(self, weights: dict[str, np.ndarray]):
        super().__init__(weights)
        self.tied = bool(weights["tied"]) if "tied" in weights else False

    def _side(self, name: str, x: np.ndarray) -> np.ndarray:
        name = "left" if self.tied else name
        return np.maximum(x @ self.w[f"w_{name}"] + self.w[f"b_{name}"], 0.0)

    def project_right(self, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The right side once (a pack's goals or arguments), to score many left rows against."""
        return self._side("right", y), y / np.maximum(np.linalg.norm(y, axis=1, keepdims=True), 1e-9)

    def probabilities(self, x: np.ndarray, right: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
        """P(match) for each row of x against each right row: (len(x), len(right))."""
        projected, raw = right
        left = self._side("left", x)
        head = x[:, :raw.shape[1]]
        cosine = (head / np.maximum(np.linalg.norm(head, axis=1, keepdims=True), 1e-9)) @ raw.T  # (n, m)
        a = left[:, None, :]
        b = projected[None, :, :]
        z = np.concatenate([np.broadcast_to(a * b, (len(left), len(projected), a.shape[2])),
                            np.abs(a - b), cosine[:, :, None]], axis=2)
        hidden = np.maximum(z @ self.w["w_mix"] + self.w["b_mix"], 0.0)
        logits = (hidden @ self.w["w_out"] + self.w["b_out"])[:, :, 0]
        return 1.0 / (1.0 + np.exp(-logits))


def span_features(encoded: Encoded, start: int, end: int) -> np.ndarray:
    """The left side of the slot head: the span's pieces, the pieces before and after it, the text."""
    before, after = encoded.context_vectors(start, end)
    return np.concatenate([encoded.span_vector(start, end), before, after, encoded.sentence])


@lru_cache(maxsize=None)
def _load(path: Path, kind: type[Weighted] = PairHead):
    return kind.load(path) if path.is_file() else None


def _folder() -> Path:
    chosen = settings().language_weights
    return Path(chosen) if chosen else WEIGHTS


def goal_head() -> PairHead | None:
    """The trained goal head, or None when `train-language` has not made one."""
    return _load(_folder() / GOAL_HEAD)


def slot_head() -> PairHead | None:
    return _load(_folder() / SLOT_HEAD)


def span_head() -> SpanHead | None:
    """The trained span head (which words are a value at all), or None."""
    return _load(_folder() / SPAN_HEAD, SpanHead)


def tagger():
    """The trained argument tagger (a fine-tuned cross-encoder: `tagger.py`), or None. Where there is
    one it reads values in place of the slot and span heads."""
    from pipeline.language.tagger import argument_tagger

    return argument_tagger(_folder()) if settings().learned_tagger else None


def reload() -> None:
    """Forget loaded heads (after training new ones)."""
    from pipeline.language.tagger import _load as load_tagger

    _load.cache_clear()
    load_tagger.cache_clear()
