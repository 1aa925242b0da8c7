""""I don't know" to a value a search of the pack finds: the search joins the session, takes the values
the user already gave, and runs before the questions of the goal it serves (real model, clingo, planner)."""

from pipeline.sessions.engine import SessionEngine
from tests.authoring.test_sgd_packs import packs  # noqa: F401 (the grooming schema's packs, a fixture)


def _not_known(opening: str, asked: str):
    """A session on the grooming pack whose first question is `asked`, answered "I don't know"."""
    engine = SessionEngine("hf")
    state = engine.open("grooming_1", "2025-05-01")
    reply = engine.reply(state, opening)
    assert reply.kind == "ask" and reply.slot == asked
    return state, engine.reply(state, "I don't know")


def test_a_value_the_user_does_not_know_is_found_by_a_search_first(packs):  # noqa: F811
    state, reply = _not_known("I want to book a grooming appointment for my dog in Tacoma", "salon_name")
    goals = [g.goal for g in state.goals]
    assert goals == ["find_salons", "book_grooming"]
    search, booking = state.goals
    assert search.values["city"] == "Tacoma" and booking.refs["salon_name"] == search.goal_id
    assert [c.api for c in state.executed] == ["find_salons"]  # it ran before the booking's questions
    assert reply.kind == "ask" and reply.slot in ("appointment_date", "appointment_time")


def test_without_a_search_that_finds_it_i_dont_know_leaves_the_question_standing(packs):  # noqa: F811
    state, reply = _not_known("find me a salon please", "city")
    assert reply.kind == "ask" and reply.slot == "city" and [g.goal for g in state.goals] == ["find_salons"]
    assert state.executed == []
