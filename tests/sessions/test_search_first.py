""""I don't know" to a value a search of the pack finds: the search joins the session, takes the values
the user already gave, and runs before the questions of the goal it serves (real model, clingo, planner)."""

from pathlib import Path

import pytest

from pipeline.authoring.sgd_packs import import_services
from pipeline.packs.pack import using_packs_root
from pipeline.sessions.engine import SessionEngine

SCHEMA = Path(__file__).resolve().parents[1] / "authoring" / "fixtures" / "grooming_schema.json"


@pytest.fixture(scope="module")
def packs(tmp_path_factory):
    root = tmp_path_factory.mktemp("packs")
    import_services(SCHEMA, root)
    with using_packs_root(root):
        yield root


def test_a_value_the_user_does_not_know_is_found_by_a_search_first(packs):
    engine = SessionEngine("hf")
    state = engine.open("grooming_1", "2025-05-01")
    reply = engine.reply(state, "I want to book a grooming appointment for my dog in Tacoma")
    assert reply.kind == "ask" and reply.slot == "salon_name"
    reply = engine.reply(state, "I don't know")
    goals = [g.goal for g in state.goals]
    assert goals == ["find_salons", "book_grooming"]
    search, booking = state.goals
    assert search.values["city"] == "Tacoma" and booking.refs["salon_name"] == search.goal_id
    assert [c.api for c in state.executed] == ["find_salons"]  # it ran before the booking's questions
    assert reply.kind == "ask" and reply.slot in ("appointment_date", "appointment_time")


def test_without_a_search_that_finds_it_i_dont_know_leaves_the_question_standing(packs):
    engine = SessionEngine("hf")
    state = engine.open("grooming_1", "2025-05-01")
    reply = engine.reply(state, "find me a salon please")
    assert reply.kind == "ask" and reply.slot == "city"
    reply = engine.reply(state, "I don't know")
    assert reply.kind == "ask" and reply.slot == "city" and [g.goal for g in state.goals] == ["find_salons"]
    assert state.executed == []
