"""The shipped heads at work on a pack made here from a schema of our own (no SGD text): which argument a
number is by the words around it, a value nobody gave left out, every reading on the Run with its reason,
and the same Analysis in `plan --json`."""

import json

import pytest

from pipeline.language.heads import goal_head, slot_head
from pipeline.run import run_pipeline
from pipeline.settings import settings
from tests.schemas import packs_of

pytestmark = pytest.mark.skipif(goal_head() is None or slot_head() is None,
                                reason="no trained heads (nesyplan train-language)")

SCHEMA = [{
    "service_name": "Lodging_9", "description": "Find houses and cabins to rent for a holiday",
    "slots": [
        {"name": "town", "description": "Town where the rental is", "is_categorical": False, "possible_values": []},
        {"name": "number_of_bedrooms", "description": "Number of bedrooms in the rental", "is_categorical": True,
         "possible_values": ["1", "2", "3", "4", "5"]},
        {"name": "number_of_bathrooms", "description": "Number of bathrooms in the rental", "is_categorical": True,
         "possible_values": ["1", "2", "3", "4"]},
        {"name": "rental_name", "description": "Name of the rental", "is_categorical": False, "possible_values": []},
        {"name": "has_hot_tub", "description": "Whether the rental has a hot tub", "is_categorical": True,
         "possible_values": ["True", "False"]},
    ],
    "intents": [{"name": "FindRental", "description": "Search for a holiday rental in a town",
                 "is_transactional": False, "required_slots": ["town"],
                 "optional_slots": {"number_of_bedrooms": "dontcare", "number_of_bathrooms": "dontcare",
                                    "has_hot_tub": "dontcare"},
                 "result_slots": ["town", "number_of_bedrooms", "number_of_bathrooms", "rental_name", "has_hot_tub"]}],
}, {
    "service_name": "Boats_3", "description": "Find boat tours on the coast",
    "slots": [
        {"name": "harbour", "description": "Harbour the tour leaves from", "is_categorical": False, "possible_values": []},
        {"name": "tour_kind", "description": "What the tour is for", "is_categorical": True,
         "possible_values": ["Sunset", "Fishing", "Whale Watching"]},
        {"name": "year_built", "description": "Year the boat was built", "is_categorical": False,
         "possible_values": []},
    ],
    "intents": [{"name": "FindTour", "description": "Search for a boat tour from a harbour",
                 "is_transactional": False, "required_slots": ["harbour"],
                 "optional_slots": {"tour_kind": "dontcare", "year_built": "dontcare"},
                 "result_slots": ["harbour", "tour_kind", "year_built"]}],
}]


@pytest.fixture(scope="module")
def packs(tmp_path_factory):
    with packs_of(tmp_path_factory.mktemp("packs"), SCHEMA) as root:
        yield root


def _kept(run, argument):
    return {v.value for v in run.analysis.values if v.argument == argument and v.kept}


def test_which_count_a_number_is_comes_from_the_words_around_it(packs):
    run = run_pipeline("we want a cabin in Banff with 4 bedrooms and 2 bathrooms", "lodging_9", "2025-05-01")
    assert _kept(run, "number_of_bedrooms") == {"4"} and _kept(run, "number_of_bathrooms") == {"2"}
    dropped = [v for v in run.analysis.values if not v.kept]
    assert dropped and all(v.why and v.probability is not None for v in dropped)
    call = run.plan.calls[0]
    assert call.args["number_of_bedrooms"].value == "4" and call.args["number_of_bathrooms"].value == "2"


def test_the_analysis_records_clauses_goals_and_the_heads_used(packs):
    run = run_pipeline("hi there. can you look for a house to rent in Jasper", "lodging_9", "2025-05-01")
    analysis = run.analysis
    assert analysis.learned == {"goal": False, "value": True, "span": True, "tagger": True}  # goal head off by default
    assert [c.act for c in analysis.clauses][-1] == "asks" and analysis.clauses[-1].goals[0]["goal"] == "find_rental"
    assert [g["goal"] for g in analysis.goals] == ["find_rental"]
    assert "Jasper" in _kept(run, "town")


def test_plan_json_carries_the_analysis(packs):
    from typer.testing import CliRunner

    from nesyplan.cli import app

    result = CliRunner().invoke(app, ["plan", "a rental in Canmore please", "--domain", "lodging_9", "--today",
                                      "2025-05-01", "--json"], env={"NESYPLAN_PACKS_DIR": str(packs)})
    assert result.exit_code == 0, result.output
    record = json.loads(result.output[result.output.index("{"):])
    assert record["analysis"]["clauses"] and any(v["argument"] == "town" for v in record["analysis"]["values"])


def _args(run):
    assert run.plan is not None, run.failure
    return {name: arg.value for name, arg in run.plan.calls[0].args.items() if arg.value is not None}


def test_a_value_told_after_the_request_is_its_goals(packs):
    # What follows the request asks for nothing: its count is still the search's, read by the head in its words.
    for told in ("We are a big family, so it has to have 4 bedrooms.", "Our group is large: 4 bedrooms at least."):
        args = _args(run_pipeline(f"Find me a rental in Banff. {told}", "lodging_9", "2025-05-01"))
        assert args["number_of_bedrooms"] == "4" and args["town"] == "Banff"


def test_a_flag_is_read_from_the_feature_it_names(packs):
    assert _args(run_pipeline("a rental in Jasper with a hot tub", "lodging_9", "2025-05-01"))["has_hot_tub"] == "True"
    assert _args(run_pipeline("a rental in Jasper, no hot tub", "lodging_9", "2025-05-01"))["has_hot_tub"] == "False"
    assert "has_hot_tub" not in _args(run_pipeline("a rental in Jasper", "lodging_9", "2025-05-01"))


def test_the_goal_head_takes_in_what_retrieval_scores_just_below_its_threshold(packs, monkeypatch):
    request = "Could you find us accommodation in Jasper?"
    taken = run_pipeline(request, "lodging_9", "2025-05-01")
    assert [c.api for c in taken.plan.calls] == ["find_rental"]
    for foreign in ("book me a flight to Denver", "play some jazz music", "I need a dentist appointment on Friday"):
        assert run_pipeline(foreign, "lodging_9", "2025-05-01").failure.kind == "out_of_domain"
    monkeypatch.setenv("NESYPLAN_LEARNED_GATE", "false")
    settings.cache_clear()
    try:
        assert run_pipeline(request, "lodging_9", "2025-05-01").failure.kind == "out_of_domain"
    finally:
        monkeypatch.delenv("NESYPLAN_LEARNED_GATE")
        settings.cache_clear()


def test_the_span_head_finds_a_value_written_without_capitals(packs):
    # The rules take a lower-case phrase only as a whole answer; the span head reads "canmore" as a value.
    run = run_pipeline("we need a rental in canmore for the long weekend", "lodging_9", "2025-05-01")
    assert any(v.lower() == "canmore" for v in _kept(run, "town"))
    assert _args(run)["town"] == "Canmore"


def test_a_number_that_counts_nothing_is_no_count(packs):
    from datetime import date

    from pipeline.language.linking import linker_for
    from pipeline.language.values import _counts_the_span_head_sees
    from pipeline.language.readers import value_readings
    from pipeline.packs.pack import load_pack

    pack = load_pack("lodging_9")
    text = "Is there a rental in Banff with 3 bedrooms? Please find me one."
    readings = value_readings(pack, text, date(2025, 5, 1))
    assert {r.text for r in readings["number_of_bedrooms"].kept} == {"3", "one"}  # the rules read both
    _counts_the_span_head_sees(pack, text, readings, linker_for(pack).proposals(text))
    assert {r.text for r in readings["number_of_bedrooms"].kept} == {"3"}
    assert readings["number_of_bedrooms"].items[-1].why.startswith("no value by the span head")
    # a count right before the word its argument counts is the user's word for what it counts, whether
    # the span head reads it or not (here it is given no proposal at all)
    text = "A rental in Banff with 2 bathrooms. Find me one."
    readings = value_readings(pack, text, date(2025, 5, 1))
    _counts_the_span_head_sees(pack, text, readings, [])
    assert {r.text for r in readings["number_of_bathrooms"].kept} == {"2"}
    assert {r.text for r in readings["number_of_bedrooms"].kept} == set()
    args = _args(run_pipeline("Is there a rental in Banff? Please find me one.", "lodging_9", "2025-05-01"))
    assert args["town"] == "Banff" and "number_of_bedrooms" not in args and "number_of_bathrooms" not in args


def test_a_listed_value_written_out_is_its_choice(packs):
    from pipeline.language.readings import Reading
    from pipeline.language.values import names_a_value
    from pipeline.packs.pack import load_pack

    boats, lodging = load_pack("boats_3"), load_pack("lodging_9")
    written = lambda pack, argument, text, value: names_a_value(pack, Reading(argument, 0, len(text), text, value))  # noqa: E731
    assert written(boats, "tour_kind", "whale watching", "Whale Watching")  # kept whatever the head says
    assert not written(boats, "tour_kind", "whales", "Whale Watching")  # words it lists not are the head's to judge
    assert not written(lodging, "has_hot_tub", "hot tub", "True") and not written(lodging, "number_of_bedrooms", "2", "2")
    assert _args(run_pipeline("I'd like a fishing trip out of Tofino", "boats_3", "2025-05-01"))["tour_kind"] == "Fishing"
    assert "tour_kind" not in _args(run_pipeline("a boat tour out of Tofino", "boats_3", "2025-05-01"))


def test_the_gate_also_reads_the_words_around_the_names(packs):
    from pipeline.language.linking import linker_for
    from pipeline.packs.pack import load_pack

    linker = linker_for(load_pack("boats_3"))
    text = "Can we do a boat trip with Quillon Brabazon?"
    names = [text[p.start:p.end] for p in linker.proposals(text)]
    assert "Quillon Brabazon" in names
    around = linker.goal_probabilities_of_the_words_around_names(text)
    assert around == linker.goal_probabilities("Can we do a boat trip with ?") != linker.goal_probabilities(text)
    assert linker.goal_probabilities_of_the_words_around_names("can we do a boat trip") == {}


def test_a_year_is_read_from_the_words_that_name_it(packs):
    from datetime import date

    from pipeline.language.readers import value_readings
    from pipeline.packs.pack import load_pack

    pack = load_pack("boats_3")
    assert pack.spec.arguments["year_built"].normalizer == "integer"
    for text, year in (("a boat built about two years back", "2023"), ("on a boat from 2019", "2019"),
                       ("a boat built last year", "2024")):
        assert year in {r.value for r in value_readings(pack, text, date(2025, 5, 1))["year_built"].kept}, text


def test_a_year_read_from_other_words_is_kept_whatever_the_head_says(packs):
    # the head learned such words as no value (SGD marks a listed year only where it is written in digits)
    for text, year in (("a boat tour out of Tofino on a boat from nine years back", "2016"),
                       ("find a sunset tour from Tofino, a boat from one years ago", "2024")):
        run = run_pipeline(text, "boats_3", "2025-05-01")
        assert _args(run)["year_built"] == year, text
        assert [v.kept for v in run.analysis.values if v.argument == "year_built"] == [True], text


def test_a_choice_reads_the_other_words_learned_for_its_values(tmp_path):
    from pipeline.values.aliases import value_words, words_for

    value = next(iter(value_words()), None)
    if value is None:
        pytest.skip("no other words for listed values (nesyplan train-language)")
    listed = words_for(value)[0]
    schema = [{"service_name": "Outings_4", "description": "Find things to do in a town",
               "slots": [{"name": "town", "description": "Town to look in", "is_categorical": False, "possible_values": []},
                         {"name": "outing_kind", "description": "Kind of outing", "is_categorical": True,
                          "possible_values": [value.title(), "Zzyzx"]}],
               "intents": [{"name": "FindOuting", "description": "Search for things to do in a town",
                            "is_transactional": False, "required_slots": ["town"],
                            "optional_slots": {"outing_kind": "dontcare"}, "result_slots": ["town", "outing_kind"]}]}]
    with packs_of(tmp_path, schema):
        from pipeline.packs.pack import load_pack

        assert listed in load_pack("outings_4").spec.arguments["outing_kind"].synonyms[value.title()]
        run = run_pipeline(f"Find me things to do in Tofino, something like a {listed}", "outings_4", "2025-05-01")
        assert _args(run).get("outing_kind") == value.title()


def test_a_flag_named_in_words_run_together_is_read_from_them_apart(tmp_path):
    schema = [{"service_name": "Cabins_2", "description": "Find cabins to rent in the mountains",
               "slots": [{"name": "town", "description": "Town the cabin is in", "is_categorical": False,
                          "possible_values": []},
                         {"name": "petfriendly", "description": "Whether animals may stay", "is_categorical": True,
                          "possible_values": ["True", "False"]}],
               "intents": [{"name": "FindCabin", "description": "Search for a cabin in a town", "is_transactional": False,
                            "required_slots": ["town"], "optional_slots": {"petfriendly": "dontcare"},
                            "result_slots": ["town", "petfriendly"]}]}]
    with packs_of(tmp_path, schema):
        for text in ("Find a cabin in Banff where I can bring my pets", "a pet friendly cabin in Banff please"):
            assert _args(run_pipeline(text, "cabins_2", "2025-05-01")).get("petfriendly") == "True", text
        assert "petfriendly" not in _args(run_pipeline("a friendly cabin in Banff", "cabins_2", "2025-05-01"))


def test_a_word_the_counted_word_begins_says_what_a_count_counts(tmp_path):
    # "bathroom" begins with "bath", what number_of_baths counts; the head alone finds the beds about as likely
    schema = [{"service_name": "Flats_5", "description": "Find flats to rent in a city",
               "slots": [{"name": "city", "description": "City the flat is in", "is_categorical": False,
                          "possible_values": []},
                         *({"name": f"number_of_{room}s", "description": f"Number of {room}rooms", "is_categorical": True,
                            "possible_values": ["1", "2", "3", "4"]} for room in ("bed", "bath"))],
               "intents": [{"name": "FindFlat", "description": "Search for a flat to rent in a city",
                            "is_transactional": False, "required_slots": ["city"],
                            "optional_slots": {"number_of_beds": "dontcare", "number_of_baths": "dontcare"},
                            "result_slots": ["city", "number_of_beds", "number_of_baths"]}]}]
    with packs_of(tmp_path, schema):
        args = _args(run_pipeline("any 4 bathroom flats in York?", "flats_5", "2025-05-01"))
        assert args.get("number_of_baths") == "4" and "number_of_beds" not in args, args


def test_a_goals_words_keep_the_users_punctuation(packs):
    # Cut into clauses and joined again with commas, the words would read differently to the heads.
    text = "Hello. Find me a rental in Banff, for the weekend."
    run = run_pipeline(text, "lodging_9", "2025-05-01")
    assert [g["source"] for g in run.analysis.goals] == [text]
    assert {v.source for v in run.analysis.values} == {text}


def test_a_story_pointed_at_gives_only_what_the_head_read_in_the_whole_request(packs):
    from datetime import date

    from pipeline.llm.grammar import ir_grammar
    from pipeline.packs.pack import load_pack

    pack = load_pack("lodging_9")
    query = "Find a rental in Banff for us"
    grammar = lambda contexts: ir_grammar(pack, query, date(2025, 5, 1), ["find_rental"], fixed=True,  # noqa: E731
                                          sources=[query], contexts=contexts)
    # Words read alone lose what is around them: a value the whole request's reading does not keep is no value.
    assert "number_of_bedrooms" not in grammar(["we need 4 bedrooms"]) and "Banff" in grammar([""])


CABINS = [{"service_name": "Cabins_8", "description": "Find and book cabins in the mountains",
           "slots": [{"name": "town", "description": "Town the cabin is in", "is_categorical": False, "possible_values": []},
                     {"name": "cabin_name", "description": "Name of the cabin", "is_categorical": False,
                      "possible_values": []},
                     {"name": "nights", "description": "Number of nights to stay", "is_categorical": True,
                      "possible_values": ["1", "2", "3", "4"]}],
           "intents": [{"name": "FindCabins", "description": "Search for cabins in a town", "is_transactional": False,
                        "required_slots": ["town"], "optional_slots": {}, "result_slots": ["town", "cabin_name"]},
                       {"name": "BookCabin", "description": "Book a stay at a cabin", "is_transactional": True,
                        "required_slots": ["cabin_name", "nights"], "optional_slots": {},
                        "result_slots": ["cabin_name", "nights", "town"]}]}]


def test_a_booking_whose_words_give_it_nothing_is_the_search_that_serves_it(tmp_path):
    from pipeline.packs.pack import load_pack
    from pipeline.retrieval.retrievers import ScoredGoal, build_retriever, picked_from

    with packs_of(tmp_path, CABINS):
        pack = load_pack("cabins_8")
        assert picked_from(pack, "book_cabin") == [("find_cabins", ["cabin_name"])]
        retriever = build_retriever(pack)
        search = lambda: ScoredGoal("find_cabins", 0.4, "Can you find one in Banff?")  # noqa: E731
        # a want of the service's thing and nothing more: the same request as the search, one goal
        merged = retriever._without_a_booking_its_search_serves([ScoredGoal("book_cabin", 0.5, "I'd love a cabin!"),
                                                                  search()])
        assert [(g.goal, g.source) for g in merged] == [("find_cabins", "I'd love a cabin!, Can you find one in Banff?")]
        # words that say the booking's verb, or give it a value, ask for it in words of its own
        for own in ("then book the first one", "we want it for 3 nights"):
            kept = retriever._without_a_booking_its_search_serves([search(), ScoredGoal("book_cabin", 0.5, own)])
            assert [g.goal for g in kept] == ["find_cabins", "book_cabin"], own


def test_a_value_named_then_described_is_the_describing_arguments(tmp_path):
    # "a film directed by X": the words after the film's name describe it, they are not its title; only a
    # value written as a name ("the film Night Owls") counts as certain where arguments share the words
    schema = [{"service_name": "Films_7", "description": "Find and stream films",
               "slots": [{"name": "film_title", "description": "Title of the film", "is_categorical": False,
                          "possible_values": []},
                         {"name": "director", "description": "Person who directed the film", "is_categorical": False,
                          "possible_values": []}],
               "intents": [{"name": "FindFilms", "description": "Search for films by who directed them",
                            "is_transactional": False, "required_slots": [], "optional_slots": {"director": "dontcare"},
                            "result_slots": ["film_title", "director"]},
                           {"name": "StreamFilm", "description": "Stream a film", "is_transactional": True,
                            "required_slots": ["film_title"], "optional_slots": {}, "result_slots": ["film_title"]}]}]
    with packs_of(tmp_path, schema):
        run = run_pipeline("Is there a film directed by Maria Lopez?", "films_7", "2025-05-01")
        assert _args(run) == {"director": "Maria Lopez"}, run.ir
        run = run_pipeline("Stream the film Night Owls Return.", "films_7", "2025-05-01")
        assert _args(run) == {"film_title": "Night Owls Return"}, run.ir


def test_the_head_judges_a_value_without_the_words_at_its_edges(tmp_path):
    # the date reader takes in "on" and "a"; SGD marks no value with them, so the head never saw one so written
    schema = [{"service_name": "Courts_4", "description": "Find and book tennis courts",
               "slots": [{"name": "town", "description": "Town the court is in", "is_categorical": False,
                          "possible_values": []},
                         {"name": "play_date", "description": "Date to play on", "is_categorical": False,
                          "possible_values": []}],
               "intents": [{"name": "BookCourt", "description": "Book a tennis court", "is_transactional": True,
                            "required_slots": ["town", "play_date"], "optional_slots": {},
                            "result_slots": ["town", "play_date"]}]}]
    with packs_of(tmp_path, schema):
        for text, day in (("I wanna reserve a court booking on the 21st of this month", "05/21/2025"),
                          ("book a court in Leeds, a June 9th game", "06/09/2025")):
            run = run_pipeline(text, "courts_4", "2025-05-01")
            assert [v.value for v in run.analysis.values if v.argument == "play_date" and v.kept] == [day], run.ir


def test_a_question_what_there_is_takes_the_goal_without_effects(tmp_path):
    # the booking's description shares the question's verb; a question what there is asks for no call
    schema = [{"service_name": "Parcels_6", "description": "Send parcels and see those sent",
               "slots": [{"name": "address", "description": "Address the parcel goes to", "is_categorical": False,
                          "possible_values": []}],
               "intents": [{"name": "ListParcels", "description": "Show every parcel on record",
                            "is_transactional": False, "required_slots": [], "optional_slots": {},
                            "result_slots": ["address"]},
                           {"name": "SendParcel", "description": "Send a parcel to an address",
                            "is_transactional": True, "required_slots": ["address"], "optional_slots": {},
                            "result_slots": ["address"]}]}]
    with packs_of(tmp_path, schema):
        run = run_pipeline("Which parcels have I sent this month?", "parcels_6", "2025-05-01")
        assert [g["goal"] for g in run.analysis.goals] == ["list_parcels"], run.ir
        run = run_pipeline("Send a parcel to 4 Elm Road.", "parcels_6", "2025-05-01")
        assert [g["goal"] for g in run.analysis.goals] == ["send_parcel"], run.ir
