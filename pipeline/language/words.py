"""General English word lists kept as data (`lexicon/<name>.yaml`, a `words:` list): the parts of the
language rules that are vocabulary, not logic, so they are read, reviewed and extended without touching
code. No list holds a service's words.

>>> "verify" in word_list("request_verbs") and "the" not in word_list("request_verbs")
True
"""

from __future__ import annotations

from functools import lru_cache
from importlib import resources

import yaml


@lru_cache(maxsize=None)
def word_list(name: str) -> frozenset[str]:
    """The words of `lexicon/<name>.yaml`, lower case."""
    raw = yaml.safe_load(resources.files("pipeline.language").joinpath(f"lexicon/{name}.yaml").read_text("utf-8"))
    words = raw.get("words") if isinstance(raw, dict) else None
    if not isinstance(words, list) or not all(isinstance(w, str) for w in words):
        raise ValueError(f"lexicon/{name}.yaml: a `words:` list of strings is expected")
    return frozenset(w.strip().lower() for w in words)
