"""Goals that could each take the other's output (a search and a booking of one service, two searches) get
data one way only: the grammar lets a reference go from a call without effects to one with them, and
between two alike from the earlier to the later; the rules never add the reference back. A circle of
references is a plan nobody can make."""

from datetime import date

import pytest
import xgrammar as xgr

from pipeline.llm.backends import DEFAULT_GGUF, packaged_model_dir
from pipeline.llm.grammar import ir_grammar
from pipeline.packs.pack import load_pack
from pipeline.run import run_pipeline
from tests.schemas import packs_of

TODAY = date(2025, 5, 1)
SLOTS = [{"name": "harbour", "description": "Harbour the boat leaves from", "is_categorical": False, "possible_values": []},
         {"name": "boat_name", "description": "Name of the boat", "is_categorical": False, "possible_values": []},
         {"name": "day", "description": "Day of the trip", "is_categorical": False, "possible_values": []}]
SCHEMA = [{
    "service_name": "Boats_7", "description": "Find and book boat trips", "slots": SLOTS,
    "intents": [
        {"name": "FindBoat", "description": "Search for a boat leaving from a harbour", "is_transactional": False,
         "required_slots": ["harbour"], "optional_slots": {}, "result_slots": ["harbour", "boat_name", "day"]},
        {"name": "FindTrip", "description": "Search for a trip on a day", "is_transactional": False,
         "required_slots": ["harbour", "day"], "optional_slots": {}, "result_slots": ["harbour", "boat_name", "day"]},
        {"name": "BookBoat", "description": "Book a boat for a day", "is_transactional": True,
         "required_slots": ["boat_name", "day"], "optional_slots": {},
         "result_slots": ["harbour", "boat_name", "day"]}],
}]


@pytest.fixture(scope="module")
def boats(tmp_path_factory):
    with packs_of(tmp_path_factory.mktemp("packs"), SCHEMA):
        yield load_pack("boats_7")


@pytest.fixture(scope="module")
def compiler():
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(packaged_model_dir()), gguf_file=DEFAULT_GGUF)
    return xgr.GrammarCompiler(xgr.TokenizerInfo.from_huggingface(tokenizer, vocab_size=len(tokenizer)))


def _references(compiler, grammar: str, ir_lines: list[str]) -> bool:
    """Whether the grammar lets these lines start an IR (a prefix is enough: what follows is other arguments)."""
    matcher = xgr.GrammarMatcher(compiler.compile_grammar(grammar))
    return matcher.accept_string("".join(line + "\n" for line in ir_lines))


def test_a_booking_takes_the_searchs_output_and_never_the_other_way(boats, compiler):
    grammar = ir_grammar(boats, "book a boat, the one you find in Oban", TODAY, goals=["book_boat", "find_boat"],
                         fixed=True)
    booking = ["_goal(g1, book_boat).", "_boat_name(g1, g2).", "_day(g1, g2).", "_goal(g2, find_boat)."]
    assert _references(compiler, grammar, booking)
    assert not _references(compiler, grammar, booking + ["_harbour(g2, g1)."])


def test_of_two_searches_the_earlier_feeds_the_later(boats, compiler):
    grammar = ir_grammar(boats, "find a boat in Oban and a trip on it", TODAY, goals=["find_boat", "find_trip"],
                         fixed=True)
    assert not _references(compiler, grammar, ["_goal(g1, find_boat).", "_harbour(g1, g2)."])
    assert _references(compiler, grammar, ["_goal(g1, find_boat).", "_goal(g2, find_trip).", "_harbour(g2, g1)."])


def test_the_rules_never_add_a_reference_back_to_a_goal_that_takes_this_ones_output(boats):
    """find_trip takes find_boat's harbour; find_boat's own harbour is missing, and find_trip's output is
    something it accepts: taking it would make a circle, so it is asked for instead."""
    ir = '_goal(g1, find_boat).\n_goal(g2, find_trip).\n_harbour(g2, g1).\n_day(g2, "friday").\n'
    run = run_pipeline("find a boat and a trip", "boats_7", TODAY.isoformat(), ir=ir)
    assert run.failure is None and run.plan is not None
    first = next(g for g in run.materialized.goals if g.goal_id == "g1")
    assert first.args["harbour"].kind == "missing"
