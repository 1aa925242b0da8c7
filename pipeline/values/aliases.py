"""Other names of values, learned from SGD train (`language.sgd_corpus.read_aliases`, written by
`nesyplan train-language` into `aliases.yaml` beside this module): "SF" is San Francisco, "Seattle, WA" is
Seattle. Only names that SGD's annotations resolve the same way across several services are kept, so the
table holds what is true of the value (a place), not of one service's catalogue. A whole value is looked
up, never a word inside one ("LA Fitness" stays as written).

>>> alias_of("SF"), alias_of(" seattle, wa "), alias_of("LA Fitness")
('San Francisco', 'Seattle', None)

The same file holds other words for listed values (`read_value_words`): words SGD train's users write for
a categorical value in several services without writing the value ("concert" for Music). A pack made
from a schema lists them as its choices' synonyms (`import-sgd`), where a person can see and edit them.

>>> words_for("Music"), words_for("Jazz")
(['concert'], [])
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

import yaml

from pipeline.settings import settings

ALIASES_NAME = "aliases.yaml"
ALIASES_FILE = Path(__file__).parent / ALIASES_NAME


def aliases_file() -> Path:
    """The table in use: the one beside a folder of heads (`NESYPLAN_LANGUAGE_WEIGHTS`, written with them
    by `train-language --out`), else the package's. Heads and the table are learned from the same services."""
    chosen = settings().language_weights
    if chosen and (Path(chosen) / ALIASES_NAME).is_file():
        return Path(chosen) / ALIASES_NAME
    return ALIASES_FILE


def _folded(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().strip(".!?\"").lower()


@lru_cache(maxsize=1)
def _tables() -> dict:
    path = aliases_file()
    if not path.is_file():
        return {}
    raw = yaml.safe_load(path.read_text("utf-8")) or {}
    return raw if isinstance(raw, dict) else {}


@lru_cache(maxsize=1)
def aliases() -> dict[str, str]:
    table = _tables().get("aliases", {})
    if not isinstance(table, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in table.items()):
        raise ValueError(f"{aliases_file()}: an `aliases:` mapping of strings is expected")
    return {_folded(k): v for k, v in table.items()}


@lru_cache(maxsize=1)
def value_words() -> dict[str, list[str]]:
    table = _tables().get("value_words", {})
    if not isinstance(table, dict) or not all(isinstance(k, str) and isinstance(v, list)
                                              and all(isinstance(w, str) for w in v) for k, v in table.items()):
        raise ValueError(f"{aliases_file()}: a `value_words:` mapping of strings to lists of strings is expected")
    return {_folded(k): v for k, v in table.items()}


def words_for(value: str) -> list[str]:
    """Other words for a listed value, [] when none were learned."""
    return list(value_words().get(_folded(value), []))


def alias_of(text: str) -> str | None:
    """The value another name stands for, or None when the words are no known other name."""
    return aliases().get(_folded(text))


def write_aliases(table: dict[str, str], words: dict[str, list[str]], path: Path = ALIASES_FILE) -> Path:
    header = ("# Written by `nesyplan train-language` from SGD train (language/sgd_corpus.read_aliases and "
              "read_value_words); do not edit.\n")
    path.write_text(header + yaml.safe_dump({"aliases": table, "value_words": words}, allow_unicode=True,
                                            sort_keys=True), "utf-8")
    for cached in (_tables, aliases, value_words):
        cached.cache_clear()
    return path
