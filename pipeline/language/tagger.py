"""The argument tagger: a cross-encoder that reads an argument's words and a text together, and tags each
word piece of the text as outside that argument's value (O), its first piece (B) or inside it (I).

It is the packaged MiniLM fine-tuned end to end (LoRA adapters on its attention, `peft`) with a tag layer
on top, trained on SGD train (`train_tagger.py`) the way D3ST and SGP-DST read SGD: the argument is known
by its name and description only, so a pack it never saw needs no training. Reading the argument and
the text in one pass is what the frozen heads could not do: the same "Friday" is a check-in date beside
"arriving" and a check-out date beside "leaving", and the encoder sees both sides at once.

It answers the questions the frozen slot and span heads answered (`linking.Linker`): P(a span is this
argument's value), and which runs of words are some argument's value.

>>> from pipeline.language.tagger import span_probability
>>> import numpy as np
>>> tags = np.array([[0.9, 0.05, 0.05], [0.1, 0.8, 0.1], [0.1, 0.1, 0.8], [0.9, 0.05, 0.05]])
>>> round(span_probability(tags, np.array([1, 2])), 2), round(span_probability(tags, np.array([0])), 2)
(0.85, 0.21)
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from pipeline.language.encoder import packaged_embedding_model, pieces_inside

OUTSIDE, BEGIN, INSIDE = 0, 1, 2
TAGGER = "argument_tagger.safetensors"
MAX_PIECES = 96  # the text and the argument's words together; SGD's turns fit in 64 nearly always
ARGUMENT_ROOM = 16  # pieces kept for the argument's words beside a text that fills MAX_PIECES by itself
# Adapters on the top layers only: what is below them needs no gradient, which halves a training step on a
# CPU; on a GPU every layer is adapted (`EVERY_LAYER`). The weights file says which (`LAYERS_KEY`).
TOP_LAYERS = (3, 4, 5)
EVERY_LAYER = (0, 1, 2, 3, 4, 5)
LAYERS_KEY = "layers"
LORA = {"r": 8, "lora_alpha": 16, "lora_dropout": 0.05, "target_modules": ["query", "key", "value", "dense"],
        "layers_pattern": "layer"}


def build_model(layers: tuple[int, ...] = TOP_LAYERS):
    """MiniLM with LoRA adapters (on `layers`) and a tag layer: what is trained and what is loaded."""
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModel

    class Tagging(torch.nn.Module):
        def __init__(self):
            super().__init__()
            # in float32 whatever the file holds: adapters are trained and applied on the same base
            self.encoder = AutoModel.from_pretrained(packaged_embedding_model(), dtype=torch.float32)
            self.tags = torch.nn.Linear(self.encoder.config.hidden_size, 3)

        def forward(self, input_ids, attention_mask, token_type_ids):
            hidden = self.encoder(input_ids=input_ids, attention_mask=attention_mask,
                                  token_type_ids=token_type_ids).last_hidden_state
            return self.tags(hidden)

    return get_peft_model(Tagging(), LoraConfig(**LORA, layers_to_transform=list(layers), modules_to_save=["tags"]))


def adapted_layers(path: Path) -> tuple[int, ...]:
    """The layers a weights file's adapters are on (files written before it was recorded: the top ones)."""
    from safetensors import safe_open

    with safe_open(str(path), "pt") as f:
        written = (f.metadata() or {}).get(LAYERS_KEY)
    return tuple(int(k) for k in written.split(",")) if written else TOP_LAYERS


def tokenizer():
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(packaged_embedding_model())


def encode_pairs(tok, arguments: list[str], texts: list[str]):
    """The (argument words, text) pairs as the model reads them, with each piece's characters in its text
    and which pieces are the text's (the second segment)."""
    # The argument's words are cut to fit, never the text; a text longer than MAX_PIECES alone (a request
    # with three uuids) is read whole, with room for a few of the argument's words, up to what the model reads.
    distinct = list(dict.fromkeys(texts))  # a request is read once beside each of its arguments: measured once
    longest = max((len(ids) for ids in tok(distinct, add_special_tokens=False)["input_ids"]), default=0)
    enc = tok(arguments, texts, padding=True, truncation="only_first",
              max_length=min(max(MAX_PIECES, longest + ARGUMENT_ROOM), tok.model_max_length),
              return_offsets_mapping=True, return_tensors="pt")
    offsets = enc.pop("offset_mapping").numpy()
    text_side = enc["token_type_ids"].numpy().astype(bool) & (offsets[:, :, 1] > offsets[:, :, 0])
    return enc, offsets, text_side


def span_probability(tags: np.ndarray, pieces: np.ndarray) -> float:
    """P(the pieces are one whole value) from a text's tag probabilities (pieces x O/B/I): the geometric
    mean of B at the first, I at the others, and not I at the piece after."""
    if not len(pieces):
        return 0.0
    first, last = pieces[0], pieces[-1]
    ps = [tags[first, BEGIN], *tags[pieces[1:], INSIDE]]
    if last + 1 < len(tags):
        ps.append(1.0 - tags[last + 1, INSIDE])
    return float(np.exp(np.mean(np.log(np.maximum(ps, 1e-9)))))


@dataclass
class Tagged:
    """One text's tags for each argument: (arguments, pieces, 3) probabilities, the pieces' characters."""
    text: str
    arguments: list[str]
    tags: np.ndarray
    offsets: np.ndarray

    def with_more(self, other: "Tagged") -> "Tagged":
        """These tags and another batch's for the same text (its pieces are the same whatever the argument),
        less the other's arguments these have already."""
        new = [k for k, a in enumerate(other.arguments) if a not in self.arguments]
        return Tagged(self.text, [*self.arguments, *(other.arguments[k] for k in new)],
                      np.concatenate([self.tags, other.tags[new]]), self.offsets)

    def probability(self, argument: int, start: int, end: int) -> float:
        return span_probability(self.tags[argument], np.flatnonzero(pieces_inside(self.offsets, start, end)))

    def runs(self, threshold: float = 0.5) -> list[tuple[int, int, float]]:
        """The runs of pieces some argument tags as a value (B then I's), as characters, widened to whole
        words, with their probability; overlapping runs keep the likelier."""
        found = []
        for k in range(len(self.arguments)):
            best = self.tags[k].argmax(axis=1)
            i = 0
            while i < len(best):
                if best[i] != BEGIN:
                    i += 1
                    continue
                j = i + 1
                while j < len(best) and best[j] == INSIDE:
                    j += 1
                p = span_probability(self.tags[k], np.arange(i, j))
                if p >= threshold:
                    found.append((*self._whole_words(self.offsets[i][0], self.offsets[j - 1][1]), p))
                i = j
        kept: list[tuple[int, int, float]] = []
        for a, b, p in sorted(found, key=lambda r: -r[2]):
            if not any(a < y and x < b for x, y, _ in kept):
                kept.append((a, b, p))
        return sorted(kept)

    def _whole_words(self, start: int, end: int) -> tuple[int, int]:
        while start > 0 and self.text[start - 1].isalnum():
            start -= 1
        while end < len(self.text) and self.text[end].isalnum():
            end += 1
        return int(start), int(end)


class ArgumentTagger:
    """The trained tagger, merged into one model for inference (the adapters add nothing to its cost)."""

    def __init__(self, path: Path):
        import torch
        from peft import set_peft_model_state_dict
        from safetensors.torch import load_file

        model = build_model(adapted_layers(path))
        set_peft_model_state_dict(model, load_file(str(path)))
        self.model = model.merge_and_unload().eval()
        self.tok = tokenizer()
        self.torch = torch
        self._lock = threading.Lock()

    def tag(self, text: str, arguments: list[str]) -> Tagged:
        """The text read against each argument's words (one batch)."""
        enc, offsets, text_side = encode_pairs(self.tok, arguments, [text] * len(arguments))
        with self._lock, self.torch.inference_mode():
            logits = self.model(**enc)
        probs = self.torch.softmax(logits.float(), dim=-1).numpy()
        # the text's pieces are the same in every row, after argument words of different lengths
        tags = np.stack([probs[k][text_side[k]] for k in range(len(arguments))])
        return Tagged(text, arguments, tags, offsets[0][text_side[0]])


@lru_cache(maxsize=None)
def _load(path: Path) -> ArgumentTagger | None:
    return ArgumentTagger(path) if path.is_file() else None


def argument_tagger(folder: Path) -> ArgumentTagger | None:
    """The tagger trained into `folder`, or None when none was."""
    return _load(folder / TAGGER)
