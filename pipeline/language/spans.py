"""The span head: which words of a text are a value at all, whatever argument they fill.

A tagger on the encoder's word-piece vectors: each piece, with the pieces beside it, is read as outside
a value (O), the first piece of one (B) or inside one (I). Trained on where SGD train's users wrote slot
values (`train.py`), it proposes the free-text values rules cannot find without a rule per wording: a
genre in lower case ("some country music"), a name with an initial ("Taraji P. Henson"), a title with
small words and a colon in it. It says only *that* words are a value; the slot head says *whose*
(`values.link_values`).

Inference is numpy only (float32).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from pipeline.language.encoder import Encoded, pieces_inside
from pipeline.language.weighted import Weighted

OUTSIDE, BEGIN, INSIDE = 0, 1, 2
NEIGHBOURS = 2  # pieces on each side a piece is read with
_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)?")


def piece_features(pieces: np.ndarray) -> np.ndarray:
    """Each piece's vector, the mean of the NEIGHBOURS before it and of those after it (zeros at an edge)."""
    n, width = pieces.shape
    padded = np.concatenate([np.zeros((NEIGHBOURS, width), pieces.dtype), pieces,
                             np.zeros((NEIGHBOURS, width), pieces.dtype)])
    before = sum(padded[k:k + n] for k in range(NEIGHBOURS)) / NEIGHBOURS
    after = sum(padded[NEIGHBOURS + 1 + k:NEIGHBOURS + 1 + k + n] for k in range(NEIGHBOURS)) / NEIGHBOURS
    return np.concatenate([pieces, before, after], axis=1).astype(np.float32)


def piece_labels(offsets: np.ndarray, spans: list[tuple[int, int]]) -> np.ndarray:
    """O/B/I per piece for value spans given in characters (the tagger's training labels).

    >>> piece_labels(np.array([[0, 1], [2, 7], [8, 13], [14, 18]]), [(2, 13)]).tolist()
    [0, 1, 2, 0]
    """
    labels = np.full(len(offsets), OUTSIDE, np.int64)
    for start, end in spans:
        inside = np.flatnonzero(pieces_inside(offsets, start, end))
        if len(inside):
            labels[inside] = INSIDE
            labels[inside[0]] = BEGIN
    return labels


@dataclass
class Proposal:
    start: int
    end: int
    probability: float  # the least likely word's P(inside a value)


class SpanHead(Weighted):
    """The tagger `train-language` fitted: features -> hidden (ReLU) -> O/B/I."""

    def piece_probabilities(self, encoded: Encoded) -> np.ndarray:
        """(pieces, 3): P(O), P(B), P(I) of each piece."""
        if not len(encoded.pieces):
            return np.zeros((0, 3), np.float32)
        hidden = np.maximum(piece_features(encoded.pieces) @ self.w["w_in"] + self.w["b_in"], 0.0)
        logits = hidden @ self.w["w_out"] + self.w["b_out"]
        logits -= logits.max(axis=1, keepdims=True)
        exp = np.exp(logits)
        return exp / exp.sum(axis=1, keepdims=True)

    def proposals(self, encoded: Encoded) -> list[Proposal]:
        return runs(encoded.text, encoded.offsets, self.piece_probabilities(encoded), self.threshold)


def _without_possessive(text: str, word: re.Match, offsets: np.ndarray, pieces: np.ndarray, p: np.ndarray,
                        threshold: float) -> int:
    """Where the word ends as a value: before its "'s" when the piece from the apostrophe is outside one
    ("Jason Aldean's album"), else where it ends ("McDonald's")."""
    for k in pieces:
        if text[offsets[k][0]:offsets[k][0] + 1] in "'’" and 1.0 - p[k][0] < threshold:
            return int(offsets[k][0])
    return word.end()


def runs(text: str, offsets: np.ndarray, p: np.ndarray, threshold: float = 0.5) -> list[Proposal]:
    """Runs of words each likelier inside a value than not (a word read by its first piece); a word
    likelier to begin a value than to go on one starts a new run.

    >>> p = np.array([[.9, .05, .05], [.1, .8, .1], [.2, .1, .7], [.3, .6, .1]])
    >>> [("a Taraji Henson Tom"[r.start:r.end], r.probability) for r in runs("a Taraji Henson Tom", np.array([[0, 1], [2, 8], [9, 15], [16, 19]]), p)]
    [('Taraji Henson', 0.8), ('Tom', 0.7)]
    """
    out: list[Proposal] = []
    run: list[tuple[int, int, float]] = []

    def close() -> None:
        if run:
            out.append(Proposal(run[0][0], run[-1][1], round(min(q for *_, q in run), 4)))
            run.clear()

    for word in _WORD.finditer(text):
        pieces = np.flatnonzero(pieces_inside(offsets, word.start(), word.end()))
        if not len(pieces):
            close()
            continue
        outside, begins, goes_on = p[pieces[0]]
        if 1.0 - outside < threshold:
            close()
            continue
        if begins > goes_on:
            close()
        run.append((word.start(), _without_possessive(text, word, offsets, pieces, p, threshold),
                    float(1.0 - outside)))
    close()
    return out
