"""A whole sentence said to a question: its value for the slot asked, and what else it gives (real model,
heads, clingo and planner, on the grooming schema's packs and a theatre service made here)."""

import pytest

from pipeline.language.heads import slot_head
from pipeline.sessions.engine import SessionEngine
from tests.authoring.test_sgd_packs import packs  # noqa: F401 (the grooming schema's packs, a fixture)
from tests.schemas import packs_of

TODAY = "2025-05-01"


def _asked(domain: str, opening: str, slot: str):
    engine = SessionEngine("hf")
    state = engine.open(domain, TODAY)
    reply = engine.reply(state, opening)
    assert reply.kind == "ask" and reply.slot == slot, reply
    return engine, state


def _values(state, goal: str) -> dict[str, str]:
    return next(g.values for g in state.goals if g.goal == goal)


def test_a_place_said_after_a_preposition_that_opens_the_sentence_is_the_place(packs):  # noqa: F811
    engine, state = _asked("grooming_1", "find me a salon please", "city")
    engine.reply(state, "In Tacoma.")
    assert _values(state, "find_salons")["city"] == "Tacoma"  # not "In Tacoma": the capital is the sentence's


def test_a_request_worded_as_a_question_answers_what_was_asked(packs):  # noqa: F811
    engine, state = _asked("grooming_1", "I want to book a grooming appointment for my dog in Tacoma", "salon_name")
    reply = engine.reply(state, "Can I get an appointment at Shaggy Chic?")
    assert _values(state, "book_grooming")["salon_name"] == "Shaggy Chic"
    assert reply.slot != "salon_name"
    engine, state = _asked("grooming_1", "I want to book a grooming appointment for my dog in Tacoma", "salon_name")
    engine.reply(state, "Do they have parking at Shaggy Chic?")  # a question back gives no name
    assert "salon_name" not in _values(state, "book_grooming")


THEATRE = [{
    "service_name": "Theatre_5", "description": "Find plays on stage in a city",
    "slots": [
        {"name": "city", "description": "City where the play is on", "is_categorical": False, "possible_values": []},
        {"name": "genre", "description": "Kind of play", "is_categorical": False, "possible_values": []},
        {"name": "director", "description": "Director of the play", "is_categorical": False, "possible_values": []},
        {"name": "play_name", "description": "Title of the play", "is_categorical": False, "possible_values": []},
    ],
    "intents": [{"name": "FindPlays", "description": "Search for plays by genre", "is_transactional": False,
                 "required_slots": ["genre"], "optional_slots": {"city": "dontcare", "director": "dontcare"},
                 "result_slots": ["city", "genre", "director", "play_name"]}],
}, {
    "service_name": "Ferries_2", "description": "Find ferry crossings between two cities",
    "slots": [
        {"name": "from_city", "description": "City the ferry leaves from", "is_categorical": False,
         "possible_values": []},
        {"name": "to_city", "description": "City the ferry goes to", "is_categorical": False, "possible_values": []},
        {"name": "passengers", "description": "Number of people travelling", "is_categorical": True,
         "possible_values": ["1", "2", "3", "4"]},
        {"name": "number_of_bikes", "description": "Number of bicycles taken on board", "is_categorical": True,
         "possible_values": ["0", "1", "2", "3"]},
    ],
    "intents": [{"name": "FindCrossing", "description": "Search for a ferry crossing", "is_transactional": False,
                 "required_slots": ["from_city", "to_city"],
                 "optional_slots": {"passengers": "1", "number_of_bikes": "0"},
                 "result_slots": ["from_city", "to_city", "passengers", "number_of_bikes"]},
                {"name": "BookCrossing", "description": "Buy tickets for a ferry crossing", "is_transactional": True,
                 "required_slots": ["from_city", "to_city"], "optional_slots": {"passengers": "1"},
                 "result_slots": ["from_city", "to_city", "passengers"]}],
}]


@pytest.fixture(scope="module")
def theatre(tmp_path_factory):
    with packs_of(tmp_path_factory.mktemp("theatre"), THEATRE) as root:
        yield root


@pytest.mark.skipif(slot_head() is None, reason="no trained slot head (nesyplan train-language)")
def test_an_answer_that_also_names_another_slots_value_gives_both(theatre):
    engine, state = _asked("theatre_5", "Can you find me a play?", "genre")
    engine.reply(state, "I would love a comedy directed by Mira Holt.")
    values = _values(state, "find_plays")
    assert values["genre"].lower() == "comedy" and values["director"] == "Mira Holt"


@pytest.mark.skipif(slot_head() is None, reason="no trained slot head (nesyplan train-language)")
def test_an_answer_is_read_as_what_was_asked_and_a_count_as_what_it_counts(theatre):
    engine, state = _asked("ferries_2", "I need a ferry from Seattle.", "to_city")
    engine.reply(state, "I'm going to the city of Victoria, and I have 2 bikes.")
    values = _values(state, "find_crossing")
    assert (values["from_city"], values["to_city"]) == ("Seattle", "Victoria")  # "city of" names no city
    assert values["number_of_bikes"] == "2" and "passengers" not in values  # "2 bikes" counts bikes


def test_a_search_said_as_an_answer_that_adds_nothing_is_the_answer(theatre):
    engine, state = _asked("ferries_2", "Buy me ferry tickets from Seattle.", "to_city")
    reply = engine.reply(state, "Find a ferry to Victoria.")
    assert [g.goal for g in state.goals] == ["book_crossing"]  # no search of its own: it restates the booking
    assert _values(state, "book_crossing")["to_city"] == "Victoria" and reply.kind == "confirm"


@pytest.mark.skipif(slot_head() is None, reason="no trained slot head (nesyplan train-language)")
def test_a_count_before_the_word_it_counts_is_kept_whatever_the_head_says(theatre):
    from pipeline.run import run_pipeline

    run = run_pipeline("Find me a ferry from Seattle to Victoria, I have zero bikes.", "ferries_2", TODAY)
    args = {a: b.value for c in run.plan.calls for a, b in c.args.items() if not b.default}
    assert args.get("number_of_bikes") == "0" and "passengers" not in args
