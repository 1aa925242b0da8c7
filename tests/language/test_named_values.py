"""A value written right after a word of its argument's name is that argument's, whatever the slot head
says, and no unnamed argument's; the word lists are data (lexicon/*.yaml)."""

import pytest

from pipeline.language.values import named_before
from pipeline.language.words import word_list
from pipeline.retrieval.speech_acts import ASKS, speech_act


@pytest.mark.parametrize("text, value, argument, named", [
    ("show me pet number 7", "7", "pet_id", True),
    ("the owner with id 12 please", "12", "owner_id", True),
    ("order no 55 is late", "55", "order_id", True),
    ("ticket 5 for tonight", "5", "ticket_id", True),
    ("a table for 4", "4", "party_size", False),
    ("a restaurant in Paris", "Paris", "restaurant_name", False),   # a word between: no naming
    ("a service called Acme", "Acme", "service_sid", False),        # "called" names no identifier
    ("show me pet number 7", "7", "owner_id", False),
    ("with 4 bedrooms, 2 bathrooms", "2", "number_of_bedrooms", False),  # a comma closes the one before
    ("with 4 bedrooms 2 bathrooms", "2", "number_of_bedrooms", False),   # "4 bedrooms" named the 4
    ("pet #7 please", "7", "pet_id", True),
])
def test_a_value_right_after_its_arguments_name_is_named(text, value, argument, named):
    assert named_before(text, text.index(value), argument) is named


def test_the_value_goes_to_the_argument_it_was_named_for(tmp_path):
    from pipeline.authoring.openapi_packs import import_openapi
    from pipeline.packs.pack import using_packs_root
    from pipeline.run import run_pipeline
    from tests.authoring.test_openapi_packs import GARAGE, write

    import_openapi(write(tmp_path, GARAGE), tmp_path / "packs", name="garage")
    with using_packs_root(tmp_path / "packs"):
        run = run_pipeline("book a repair for car number 31", "garage", "2026-05-04", translator="hf")
    readings = [v for v in run.analysis.values if v.text == "31"]
    assert {v.argument for v in readings if v.kept} == {"car_id"}       # the slot head alone dropped it
    assert any(v.argument == "car_id" and (v.probability or 0) < 0.5 for v in readings)
    assert '_car_id(g1, "31")' in run.ir


def test_request_verbs_are_data_and_open_a_request():
    verbs = word_list("request_verbs")
    assert {"show", "verify", "approve", "register"} <= verbs and "the" not in verbs
    assert speech_act("verify it") == ASKS and speech_act("approve the expense claim") == ASKS


@pytest.mark.parametrize("name", ["fillers", "question_openers", "subjects", "finite", "subordinators"])
def test_every_speech_word_list_is_data(name):
    words = word_list(name)
    assert words and all(w == w.strip().lower() and " " not in w for w in words)


def _claims(text, *claims):
    """Readings per argument: (argument, words, probability) each."""
    from pipeline.language.readings import Readings

    readings = {}
    for argument, words, p in claims:
        found = readings.setdefault(argument, Readings(argument, text))
        found.add((text.index(words), text.index(words) + len(words)))
        found.items[-1].probability = p
    return readings


def test_words_claimed_by_more_arguments_than_there_are_mentions_go_to_the_likeliest():
    from pipeline.language.mentions import one_argument_per_mention

    text = "flights out of Oslo please"
    readings = _claims(text, ("origin", "Oslo", 0.97), ("destination", "Oslo", 0.95))
    one_argument_per_mention(readings)
    assert [r.text for r in readings["origin"].kept] == ["Oslo"] and not readings["destination"].kept
    assert "one argument per mention" in readings["destination"].items[0].why
    # overlapping words are one mention: the star keeps every reading of the name, the director none
    text = "a film starring Ann B. Lee"
    readings = _claims(text, ("star", "Ann B. Lee", 0.99), ("star", "Lee", 0.98), ("director", "Ann B. Lee", 0.9),
                       ("director", "Lee", 0.97))
    one_argument_per_mention(readings)
    assert len(readings["star"].kept) == 2 and not readings["director"].kept


def test_each_place_goes_where_the_pair_is_likeliest():
    from pipeline.language.mentions import one_argument_per_mention

    text = "from Oslo to Bergen"  # the head finds Bergen the likelier origin on its own
    readings = _claims(text, ("origin", "Oslo", 0.98), ("origin", "Bergen", 0.99), ("destination", "Oslo", 0.93),
                       ("destination", "Bergen", 0.99), ("airline", "Oslo", 0.6))
    one_argument_per_mention(readings)
    assert [r.text for r in readings["origin"].kept] == ["Oslo"]
    assert [r.text for r in readings["destination"].kept] == ["Bergen"] and not readings["airline"].kept
    # an argument nobody competes with keeps every reading: which one is the LLM's to choose
    readings = _claims("dinner at Nopa or Zuni", ("restaurant", "Nopa", 0.9), ("restaurant", "Zuni", 0.9))
    one_argument_per_mention(readings)
    assert len(readings["restaurant"].kept) == 2


DENTISTS = [{"service_name": "Dentists_9", "description": "Dentists and their appointments",
             "slots": [{"name": "city", "description": "City the dentists work in", "is_categorical": False,
                        "possible_values": []}],
             "intents": [{"name": "FindDentist", "description": "Find dentists in a city", "is_transactional": False,
                          "required_slots": ["city"], "optional_slots": {}, "result_slots": ["city"]}]}]


def test_the_services_words_in_lower_case_after_a_name_are_not_part_of_it(tmp_path):
    """Where the span head proposes a name with a word of the service after it, the name is read alone."""
    from datetime import date

    from pipeline.language.readers import value_readings
    from pipeline.language.spans import Proposal
    from pipeline.language.values import with_proposals
    from pipeline.packs.pack import load_pack
    from tests.schemas import packs_of

    with packs_of(tmp_path, DENTISTS):
        pack = load_pack("dentists_9")
        for text, name in (("I need a Lower Hutt dentist today", "Lower Hutt"),
                           ("any Lower Hutt dentists", "Lower Hutt"),
                           ("I need the Lower Hutt Dentist Clinic", "Lower Hutt Dentist Clinic")):  # its own capitals
            readings = value_readings(pack, text, date(2026, 5, 4))
            start = text.index("Lower")
            end = text.index(" today") if "today" in text else len(text)
            added = with_proposals(pack, text, readings, [Proposal(start, end, 0.9)])
            assert [text[a:b] for a, b in added] == [name], text
            assert name in {r.text for r in readings["city"].items}


def test_a_named_reading_outweighs_the_head_over_words_inside_it():
    from pipeline.language.mentions import one_argument_per_mention
    from pipeline.language.readings import Readings

    text = "find the venue Lark Hall."
    start = text.index("Lark Hall")

    def readings():
        found = {name: Readings(name, text) for name in ("venue_id", "guest_name")}
        found["venue_id"].add((start, start + 9))
        found["guest_name"].add((start, start + 4))  # the head reads a person's name inside it
        found["venue_id"].items[0].probability, found["guest_name"].items[0].probability = 0.001, 0.99
        return found

    unnamed = readings()
    one_argument_per_mention(unnamed)
    assert [r.text for r in unnamed["guest_name"].kept] == ["Lark"] and not unnamed["venue_id"].kept
    named = readings()  # "the venue Lark Hall": the user said whose value it is
    one_argument_per_mention(named, named=frozenset({("venue_id", start, start + 9)}))
    assert [r.text for r in named["venue_id"].kept] == ["Lark Hall"] and not named["guest_name"].kept
