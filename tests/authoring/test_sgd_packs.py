"""SGD schemas as packs (`import-sgd`), with the real stages: a schema of our own (a grooming salon and a
bakery, in fixtures/) is imported, validated and planned; optional arguments carry their defaults; a
replayed search result feeds the booking; broken schemas are refused by service, intent and slot."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline.authoring.sgd_packs import import_services, infer_normalizer
from pipeline.packs.pack import load_pack, using_packs_root
from pipeline.packs.sgd_schema import SgdSchemaError, SgdSlot, load_schema
from pipeline.run import new_run, run_pipeline
from pipeline.sessions.engine import SessionEngine
from pipeline.sessions.commands import StartRequest, TurnInput
from pipeline.sessions.records import RecordedCall

SCHEMA = Path(__file__).with_name("fixtures") / "grooming_schema.json"
TODAY = "2019-03-01"


@pytest.fixture(scope="module")
def packs(tmp_path_factory):
    root = tmp_path_factory.mktemp("sgd-packs")
    import_services(SCHEMA, root)
    with using_packs_root(root):
        yield root


def _plan(ir: str):
    run = run_pipeline("", "grooming_1", TODAY, ir=ir)
    assert run.status == "succeeded", run.failure
    return run.plan


def test_every_intent_is_a_goal_and_each_slot_is_read_by_the_normaliser_its_words_say(packs):
    pack = load_pack("grooming_1")
    assert pack.requestable_goals() == ["find_salons", "book_grooming"]
    assert pack.api_of_operation("BookGrooming") == "book_grooming"
    kinds = {name: a.normalizer for name, a in pack.spec.arguments.items()}
    assert kinds == {"city": "title_text", "salon_name": "title_text", "appointment_date": "future_date",
                     "appointment_time": "time", "pet_count": "integer", "trims_nails": "choice",
                     "package": "choice", "owner_name": "person_name", "deposit": "amount"}
    assert "salon_phone" not in kinds  # a result slot no intent takes is no argument
    assert pack.spec.arguments["salon_name"].accepts_output == ["find_salons_result", "book_grooming_result"]
    flag = pack.spec.arguments["trims_nails"].synonyms  # yes/no, and the feature its name names
    assert flag["True"][:2] == ["yes", "true"] and {"nails", "trims nails"} <= set(flag["True"])
    assert flag["False"][:2] == ["no", "false"] and "no nails" in flag["False"]
    book = pack.spec.apis["book_grooming"]
    assert book.optional == {"pet_count": "1", "package": "Basic", "owner_name": None, "deposit": None}
    assert book.arguments[:3] == ["salon_name", "appointment_date", "appointment_time"]


@pytest.mark.parametrize("slot, expected", [
    ({"name": "number_of_guests", "description": "How many are coming"}, "integer"),
    ({"name": "visit_day", "description": "Day of the visit"}, "future_date"),
    ({"name": "opened_on", "description": "The date of a past order"}, "date"),
    ({"name": "arrival", "description": "The time of arrival"}, "time"),
    ({"name": "total_fare", "description": "What the trip costs"}, "amount"),
    ({"name": "payee_name", "description": "Name of the person who receives the money"}, "person_name"),
    ({"name": "contact_email", "description": "Where the receipt goes"}, "email"),
    ({"name": "street_address", "description": "Address of the venue"}, "title_text"),
    ({"name": "color", "description": "Paint color", "type": "lowercase_text"}, "lowercase_text"),
])
def test_the_inference_rules_read_kinds_of_values_not_services(slot, expected):
    assert infer_normalizer(SgdSlot(**slot)) == expected


def test_an_opening_with_a_value_plans_asks_for_missing_required_slots_and_carries_defaults(packs):
    plan = _plan('_goal(g1, book_grooming).\n_salon_name(g1, "shaggy chic").\n_appointment_time(g1, "4 pm").\n')
    (call,) = plan.calls
    assert call.args["salon_name"].value == "Shaggy Chic" and call.args["appointment_time"].value == "16:00"
    assert call.args["appointment_date"].get_info == "appointment_date"  # required, not given: asked
    assert call.args["pet_count"].value == "1" and call.args["pet_count"].default  # optional: its default
    assert call.args["package"].value == "Basic" and call.args["package"].default
    assert "owner_name" not in call.args and "deposit" not in call.args  # optional, no default: left out
    assert '"1";  (default)' in plan.text and "get_info_api(\"pet_count\")" not in plan.text


def test_a_value_the_user_gives_replaces_the_default_and_unreadable_words_are_asked_about(packs):
    (call,) = _plan('_goal(g1, book_grooming).\n_pet_count(g1, "three dogs").\n_owner_name(g1, "ana ruiz").\n').calls
    assert call.args["pet_count"].value == "3" and not call.args["pet_count"].default
    assert call.args["owner_name"].value == "Ana Ruiz"
    (call,) = _plan('_goal(g1, book_grooming).\n_package(g1, "the platinum one").\n').calls
    assert call.args["package"].get_info == "package"  # words for it that no value reads: never the default


def test_the_real_model_plans_a_search_opening_with_its_city_and_asks_nothing(packs):
    run = run_pipeline("find me a grooming salon in Portland", "grooming_1", TODAY, translator="hf")
    assert run.status == "succeeded", run.failure
    (call,) = run.plan.calls
    assert call.api == "find_salons" and call.args["city"].value == "Portland"
    assert not any(a.get_info for a in call.args.values())


def test_a_replayed_search_result_feeds_the_booking(packs):
    engine = SessionEngine("hf", executor="replay")
    state = engine.open("grooming_1", TODAY)
    state.recorded = [RecordedCall(api="find_salons", args={"city": "Portland"},
                                   results=[{"salon_name": "Shaggy Chic", "city": "Portland", "salon_phone": "503-555-0101"},
                                            {"salon_name": "Muddy Paws", "city": "Portland"}])]
    ir = ('_goal(g1, find_salons).\n_city(g1, "portland").\n_goal(g2, book_grooming).\n_salon_name(g2, g1).\n'
          '_appointment_date(g2, "march 8").\n_appointment_time(g2, "10am").\n')
    reply, _run = engine.advance(state, TurnInput(turn=0, message="find a salon in portland and book it",
                                                  commands=[StartRequest(run=new_run("", "grooming_1", TODAY, ir=ir))]))
    # The booking (a transactional intent) is read back with the salon found, and runs on a yes.
    assert reply.kind == "confirm" and "Shaggy Chic" in reply.text and len(state.executed) == 1, reply.text
    reply = engine.reply(state, "yes")
    assert reply.kind == "done", reply.text
    search, booking = state.executed
    assert search.fields["salon_name"] == "Shaggy Chic"
    assert booking.api == "book_grooming" and booking.args["salon_name"] == {"ref": 0}
    from pipeline.evaluation.sgd import executed_values

    assert executed_values(state)[1] == ("book_grooming", {"salon_name": "Shaggy Chic", "appointment_date": "03/08/2019",
                                                           "appointment_time": "10:00", "pet_count": "1",
                                                           "package": "Basic"})


def test_a_call_the_recording_does_not_know_gets_no_recorded_answer(packs):
    from pipeline.sessions.executors import ReplayExecutor

    executor = ReplayExecutor(load_pack("grooming_1"), recorded=[RecordedCall(api="find_salons", args={"city": "Portland"},
                                                                              results=[{"salon_name": "Shaggy Chic"}])])
    assert executor.call("find_salons", {"city": "portland"}) == {"salon_name": "Shaggy Chic"}
    assert isinstance(executor.call("find_salons", {"city": "Salem"}), str)
    # an optional argument equal to its default, or no constraint, is the same call
    assert executor.call("find_salons", {"city": "Portland", "trims_nails": "dontcare"}) == {"salon_name": "Shaggy Chic"}


def test_importing_is_deterministic_and_the_overlay_survives_a_reimport(tmp_path):
    import_services(SCHEMA, tmp_path)
    first = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    overlay = tmp_path / "domains" / "grooming_1" / "overlay.yaml"
    overlay.write_text("goals:\n  book_grooming:\n    examples: [get my two poodles trimmed on saturday]\n"
                       "out_of_scope: [sell me dog food]\narguments:\n  city:\n    examples: [Salem]\n")
    import_services(SCHEMA, tmp_path, ["Grooming_1"])
    pack_yaml = tmp_path / "domains" / "grooming_1" / "pack.yaml"
    with using_packs_root(tmp_path):
        pack = load_pack("grooming_1")
    assert pack.spec.goals["book_grooming"].examples == ["get my two poodles trimmed on saturday"]
    assert pack.spec.out_of_scope == ["sell me dog food"] and pack.spec.arguments["city"].examples == ["Salem"]
    assert overlay.read_text().startswith("goals:")
    overlay.unlink()
    import_services(SCHEMA, tmp_path, ["Grooming_1"])
    assert pack_yaml.read_bytes() == first[pack_yaml]
    import_services(SCHEMA, tmp_path)
    assert {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()} == first


def _broken(tmp_path, change) -> Path:
    services = json.loads(SCHEMA.read_text())
    change(services[0])
    path = tmp_path / "schema.json"
    path.write_text(json.dumps(services))
    return path


@pytest.mark.parametrize("change, words", [
    (lambda s: s["slots"][0].update(type="postcode"),
     ["Grooming_1", "slot 'city'", "intent FindSalons", "unknown type 'postcode'"]),
    (lambda s: s["intents"][1]["required_slots"].append("salon"),
     ["Grooming_1", "intent BookGrooming", "required slot 'salon'", "closest: 'salon_name'"]),
    (lambda s: s["intents"][0]["optional_slots"].update(nail_polish="dontcare"),
     ["Grooming_1", "intent FindSalons", "optional slot 'nail_polish'"]),
    (lambda s: s["slots"][1].update(name="SalonName"), ["Grooming_1", "slot 'SalonName'"]),
    (lambda s: s["slots"][4].update(possible_values=[]), ["Grooming_1", "slot 'pet_count'", "categorical"]),
    (lambda s: s["intents"][0].update(required_slot=["city"]), ["Grooming_1", "intent 'FindSalons'", "required_slot: unknown key (closest: 'required_slots')"]),
    (lambda s: s["intents"][1].update(name="find_salons"), ["Grooming_1", "intents 'FindSalons' and 'find_salons' make the same goal"]),
])
def test_a_broken_schema_is_refused_naming_the_service_intent_and_slot(tmp_path, change, words):
    with pytest.raises(SgdSchemaError) as refused:
        import_services(_broken(tmp_path, change), tmp_path / "out")
    for word in words:
        assert word in str(refused.value)
    assert not (tmp_path / "out" / "domains").exists()  # nothing written


def test_a_broken_overlay_is_refused_with_its_file_and_key(tmp_path):
    overlay = tmp_path / "domains" / "grooming_1" / "overlay.yaml"
    overlay.parent.mkdir(parents=True)
    overlay.write_text("arguments:\n  cty:\n    examples: [Salem]\n")
    with pytest.raises(SgdSchemaError, match=r"overlay.yaml: arguments.cty: no such argument .*closest: 'city'"):
        import_services(SCHEMA, tmp_path)
    overlay.write_text("goals:\n  book_grooming:\n    exampels: [x]\n")
    with pytest.raises(SgdSchemaError, match=r"overlay.yaml: goals.book_grooming.exampels"):
        import_services(SCHEMA, tmp_path)


def test_the_cli_imports_and_refuses_with_exit_codes(tmp_path):
    command = [sys.executable, "-m", "nesyplan.cli", "import-sgd", str(SCHEMA), "--out", str(tmp_path)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "2 pack(s) imported and validated" in done.stdout
    broken = _broken(tmp_path, lambda s: s["intents"][0]["required_slots"].append("zip"))
    refused = subprocess.run([*command[:4], str(broken), "--out", str(tmp_path / "x")], capture_output=True, text=True,
                             timeout=300)
    assert refused.returncode == 2 and "required slot 'zip'" in refused.stderr


def test_every_schema_loads_as_services():
    assert [s.service_name for s in load_schema(SCHEMA)] == ["Grooming_1", "Bakery_1"]


def test_the_web_pages_plan_graph_marks_a_default_as_one(packs):
    from workers.ui import plan_graph

    svg = str(plan_graph(_plan('_goal(g1, book_grooming).\n_pet_count(g1, "2").\n')))
    assert 'data-defaults="package"' in svg  # pet_count was given: no default
    assert "pet_count = 2\npackage = Basic (default)</title>" in svg


def test_every_service_is_checked_before_any_pack_is_written(tmp_path):
    services = json.loads(SCHEMA.read_text())
    services[1]["intents"][0]["required_slots"].append("frosting")  # the second service is broken
    path = tmp_path / "schema.json"
    path.write_text(json.dumps(services))
    with pytest.raises(SgdSchemaError, match="Bakery_1: intent OrderCake: required slot 'frosting'"):
        import_services(path, tmp_path / "out")
    assert not (tmp_path / "out" / "domains").exists()  # not even the first service's pack


def test_a_yes_no_flag_is_read_from_the_feature_its_name_names():
    from pipeline.authoring.sgd_packs import flag_synonyms

    flags = flag_synonyms("has_hot_tub", {"find", "rental"})
    assert {"hot", "tub", "hot tub"} <= set(flags["True"]) and "has" not in flags["True"]
    assert {"no tub", "without hot", "no hot tub"} <= set(flags["False"])
    # A word of the service's own goals names no feature: asking for a ride is no shared ride.
    assert "ride" not in flag_synonyms("shared_ride", {"get", "ride"})["True"]
