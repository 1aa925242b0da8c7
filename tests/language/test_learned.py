"""The shipped heads at work on a pack made here from a schema of our own (no SGD text): which argument a
number is by the words around it, a value nobody gave left out, every reading on the Run with its reason,
and the same Analysis in `plan --json`."""

import json

import pytest

from pipeline.authoring.sgd_packs import import_services
from pipeline.language.heads import goal_head, slot_head
from pipeline.packs.pack import using_packs_root
from pipeline.run import run_pipeline

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
    ],
    "intents": [{"name": "FindRental", "description": "Search for a holiday rental in a town",
                 "is_transactional": False, "required_slots": ["town"],
                 "optional_slots": {"number_of_bedrooms": "dontcare", "number_of_bathrooms": "dontcare"},
                 "result_slots": ["town", "number_of_bedrooms", "number_of_bathrooms", "rental_name"]}],
}]


@pytest.fixture(scope="module")
def packs(tmp_path_factory):
    root = tmp_path_factory.mktemp("packs")
    schema = root / "schema.json"
    schema.write_text(json.dumps(SCHEMA))
    import_services(schema, root)
    with using_packs_root(root):
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
    assert analysis.learned == {"goal": False, "value": True}  # the goal head is off by default
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
