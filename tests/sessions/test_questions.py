"""The questions a session asks for a missing value read as sentences: a pack's own `question:`, else one
made from the argument's name and description, with no doubled brackets and no raw enumeration."""

import pytest

from pipeline.packs.pack import ArgumentType, load_pack, pack_names
from pipeline.sessions.engine import question_for


def _reads_well(question: str) -> bool:
    depth = 0
    for ch in question:
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if depth < 0 or depth > 1:  # a closing bracket first, or a bracket inside a bracket
            return False
    return depth == 0 and "e.g." not in question and "…" not in question and "..." not in question


@pytest.mark.parametrize("domain", [d for d in pack_names() if d != "catalog500"])
def test_every_installed_packs_questions_read_well(domain):
    for name, spec in load_pack(domain).spec.arguments.items():
        question = question_for(name, spec)
        assert question.startswith("Please tell me the ") and question.endswith(".") and _reads_well(question), question


def test_a_description_with_its_own_brackets_and_list_becomes_one_sentence():
    spec = ArgumentType(normalizer="choice", values=["app balance", "card", "bank"],
                        description="where the money comes from (app balance, card, …)")
    question = question_for("funding_source", spec)
    assert question == "Please tell me the funding source (where the money comes from; app balance, card or bank)."
    assert _reads_well(question)
    assert question_for("city", ArgumentType(normalizer="title_text", description="City, e.g. Boston")) == \
        "Please tell me the city."  # the description only repeats the name once its example is dropped


def test_a_packs_own_question_is_asked_as_written():
    spec = ArgumentType(normalizer="future_date", description="day of the visit", question="Which day suits you?")
    assert question_for("visit_day", spec) == "Which day suits you?"
