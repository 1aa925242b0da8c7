"""The table of other names in use is the one learned with the heads in use."""

import pytest

from pipeline.settings import settings
from pipeline.values import aliases
from pipeline.values.aliases import alias_of, write_aliases, words_for


@pytest.fixture
def forget():
    def clear():
        settings.cache_clear()
        for cached in (aliases._tables, aliases.aliases, aliases.value_words):
            cached.cache_clear()
    clear()
    yield clear
    clear()


def test_a_folder_of_heads_brings_its_own_table(tmp_path, monkeypatch, forget):
    write_aliases({"hfx": "Halifax"}, {"Upper": ["top"]}, tmp_path / "aliases.yaml")
    monkeypatch.setenv("NESYPLAN_LANGUAGE_WEIGHTS", str(tmp_path))
    forget()
    assert alias_of("HFX") == "Halifax" and words_for("upper") == ["top"]
    assert alias_of("SF") is None  # the package's table is not mixed in: heads and table come from one training
    monkeypatch.delenv("NESYPLAN_LANGUAGE_WEIGHTS")
    forget()
    assert alias_of("HFX") is None and alias_of("SF") == "San Francisco"


def test_a_folder_of_heads_without_a_table_keeps_the_packages(tmp_path, monkeypatch, forget):
    monkeypatch.setenv("NESYPLAN_LANGUAGE_WEIGHTS", str(tmp_path))
    forget()
    assert alias_of("SF") == "San Francisco"
