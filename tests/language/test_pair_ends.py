"""The two ends of a pair of arguments (where a trip starts and ends, a stay's first and last day): the
words right before a value say which end it is ("to", "until" the end; "from" the start), where the slot
head finds both ends about as likely; the lists are data (lexicon/start_words.yaml, end_words.yaml)."""

import pytest

from pipeline.language.values import argument_end, end_said_before
from pipeline.language.words import word_list

BARGES = [{"service_name": "Barges_7", "description": "Canal barge trips between towns",
           "slots": [{"name": "embark_town", "description": "Town the barge departs from", "is_categorical": False,
                      "possible_values": []},
                     {"name": "moor_town", "description": "Town the barge arrives at", "is_categorical": False,
                      "possible_values": []},
                     {"name": "first_night", "description": "Start date of the trip", "is_categorical": False,
                      "possible_values": []},
                     {"name": "last_night", "description": "End date of the trip", "is_categorical": False,
                      "possible_values": []}],
           "intents": [{"name": "FindBargeTrips", "description": "Find barge trips between two towns",
                        "is_transactional": False, "required_slots": ["embark_town", "moor_town"],
                        "optional_slots": {"first_night": "dontcare", "last_night": "dontcare"},
                        "result_slots": ["embark_town", "moor_town", "first_night", "last_night"]}]}]


def test_an_arguments_end_is_read_from_its_name_else_its_description(tmp_path):
    from pipeline.packs.pack import load_pack
    from tests.schemas import packs_of

    with packs_of(tmp_path, BARGES):
        pack = load_pack("barges_7")
        # none of the names says an end: the descriptions do
        assert [argument_end(pack, a) for a in ("embark_town", "moor_town", "first_night", "last_night")] == \
            ["start", "end", "start", "end"]


@pytest.mark.parametrize("text, value, shared, end", [
    ("a barge to Lyon", "Lyon", set(), "end"),
    ("a barge from Lyon", "Lyon", set(), "start"),
    ("barges out of Lyon", "Lyon", set(), "start"),
    ("a map of Lyon", "Lyon", set(), None),
    ("stay until the 9th", "the 9th", set(), "end"),
    ("a barge in Lyon", "Lyon", set(), None),
    ("arriving on the 9th", "on the 9th", set(), None),     # a verb of motion ends a trip and begins a stay
    ("from Lyon, Arles too", "Arles", set(), None),    # a comma closes what came before
    # the words before "to" name the argument that changes: that name says the end, not the "to"
    ("move the start date to the 9th", "the 9th", {"date"}, "start"),
    ("a barge from Lyon to Arles", "Arles", {"town"}, "end"),
])
def test_the_word_before_a_value_says_which_end(text, value, shared, end):
    assert end_said_before(text, text.index(value), shared) == end


def test_a_value_after_to_is_the_end_of_the_pair_whatever_the_head_prefers(tmp_path):
    from pipeline.run import run_pipeline
    from tests.schemas import packs_of

    with packs_of(tmp_path, BARGES):
        # the slot head alone reads the first two as where the trip starts
        for text, end, other in (("I am going to Arles by barge", "moor_town", "embark_town"),
                                 ("What barge trips are there to Arles?", "moor_town", "embark_town"),
                                 ("I need a barge from Arles", "embark_town", "moor_town")):
            run = run_pipeline(text, "barges_7", "2026-05-04", translator="hf")
            kept = {v.argument for v in run.analysis.values if v.text == "Arles" and v.kept}
            assert kept == {end}, (text, run.analysis.values)
            assert f'_{end}(g1, "Arles")' in run.ir and f"_{other}(" not in run.ir


def test_a_function_word_in_an_arguments_name_names_no_value(tmp_path):
    """An argument named "town_of_mooring" is not named by the "of" of "out of Arles": the value is the
    start's, as the words before it say."""
    import copy

    from pipeline.run import run_pipeline
    from tests.schemas import packs_of

    schema = copy.deepcopy(BARGES)
    schema[0]["slots"][1]["name"] = "town_of_mooring"
    intent = schema[0]["intents"][0]
    intent["required_slots"] = ["embark_town", "town_of_mooring"]
    intent["result_slots"] = ["embark_town", "town_of_mooring", "first_night", "last_night"]
    with packs_of(tmp_path, schema):
        run = run_pipeline("I need a barge out of Arles", "barges_7", "2026-05-04", translator="hf")
        assert '_embark_town(g1, "Arles")' in run.ir and "_town_of_mooring(g1, \"" not in run.ir, run.analysis.values


def test_the_ends_are_data():
    starts, ends = word_list("start_words"), word_list("end_words")
    assert {"origin", "departure", "pickup"} <= starts and {"destination", "arrival", "dropoff"} <= ends
    assert not starts & ends
    assert word_list("start_words", "before_a_value") == {"from", "out of"} and "to" in word_list("end_words", "before_a_value")
