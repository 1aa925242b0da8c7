"""The agent's sentences are templates in `pipeline/sessions/replies.yaml`: every `say` in the code names one
and gives exactly its fields, and every template is said somewhere."""

import ast
from pathlib import Path

import pytest

from pipeline.sessions.replies import fields, listed, say, templates

ROOT = Path(__file__).resolve().parents[2]


def _says() -> list[tuple[str, str, set[str]]]:
    """(where, template, the fields given) of each `say("...", ...)` in the code."""
    found = []
    for path in sorted((ROOT / "pipeline").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "say" \
                    and node.args and isinstance(node.args[0], ast.Constant):
                found.append((f"{path.relative_to(ROOT)}:{node.lineno}", node.args[0].value,
                              {k.arg for k in node.keywords}))
    return found


def test_every_say_names_a_template_and_gives_exactly_its_fields():
    says = _says()
    assert len(says) > 20
    for where, name, given in says:
        assert name in templates(), f"{where}: no template {name!r} in replies.yaml"
        assert given == fields(name), f"{where}: {name!r} takes {sorted(fields(name))}, given {sorted(given)}"


def test_every_template_is_said():
    said = {name for _, name, _ in _says()} | {"either", "both"}  # the joins `listed` says
    assert set(templates()) - said == set()


def test_a_missing_field_fails_and_lists_read_as_a_sentence():
    with pytest.raises(KeyError):
        say("handoff", why="you asked for a person")
    assert listed(["a", "b"], "both") == "a and b"
    assert say("read_back_with_values", what="book a table", values=listed(["the date 2026-03-01", "the party size 4"], "both")) \
        == "I am about to carry this out: book a table, with the date 2026-03-01 and the party size 4. Shall I go ahead?"
