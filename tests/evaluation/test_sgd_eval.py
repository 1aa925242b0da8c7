"""eval-sgd over dialogues in SGD's own format, written here for a schema of our own (fixtures of the
authoring tests): cases read from the files, the scorer on hand-made plans, and a whole run with the real
model, planner and replay executor."""

import gzip
import json
import shutil
from pathlib import Path

import pytest

from pipeline.authoring.sgd_packs import import_services
from pipeline.packs.sgd_schema import load_schema
from pipeline.evaluation.sgd import (Opening, cases, confirm_answer, evaluate_sgd, read_dialogues, rename_map, renamed,
                                     score_opening, services_to_import, simulate)
from pipeline.packs.pack import load_pack, using_packs_root
from pipeline.records import Failure, Plan, PlanArg, PlanCall, Run

SCHEMA = Path(__file__).resolve().parents[1] / "authoring" / "fixtures" / "grooming_schema.json"


def _user(text, service, intent, informs, **spans):
    return {"speaker": "USER", "utterance": text, "frames": [{
        "service": service, "slots": [],
        "actions": [{"act": "INFORM_INTENT", "slot": "intent", "values": [intent], "canonical_values": [intent]}] +
                   [{"act": "INFORM", "slot": s, "values": [w], "canonical_values": [c]} for s, (w, c) in informs.items()],
        "state": {"active_intent": intent, "requested_slots": [], "slot_values": {}}}]}


def _system(text, service, call=None, results=()):
    frame = {"service": service, "slots": [], "actions": []}
    if call:
        frame["service_call"] = {"method": call[0], "parameters": call[1]}
        frame["service_results"] = list(results)
    return {"speaker": "SYSTEM", "utterance": text, "frames": [frame]}


DIALOGUES = [
    {"dialogue_id": "t_1", "services": ["Bakery_1"], "turns": [
        _user("I'd like to order a lemon cake", "Bakery_1", "OrderCake", {"cake_flavor": ("lemon", "Lemon")}),
        _system("Which day suits you for the pickup?", "Bakery_1"),
        _user("on March 5th", "Bakery_1", "OrderCake", {"pickup_date": ("March 5th", "2019-03-05")}),
        _system("Ordered.", "Bakery_1", ("OrderCake", {"cake_flavor": "Lemon", "pickup_date": "2019-03-05"}),
                [{"cake_flavor": "Lemon", "pickup_date": "2019-03-05"}]),
    ]},
    {"dialogue_id": "t_2", "services": ["Grooming_1"], "turns": [
        _user("I need a grooming salon in Portland", "Grooming_1", "FindSalons", {"city": ("Portland", "Portland")}),
        _system("Shaggy Chic is one.", "Grooming_1", ("FindSalons", {"city": "Portland"}),
                [{"salon_name": "Shaggy Chic", "city": "Portland", "trims_nails": "True"}]),
    ]},
]


def write_split(split: Path, schema: Path, dialogues: list[dict]) -> Path:
    """An SGD split as the dataset ships one: schema.json and gzipped dialogues."""
    split.mkdir()
    shutil.copyfile(schema, split / "schema.json")
    with gzip.open(split / "dialogues_001.json.gz", "wt", encoding="utf-8") as handle:
        json.dump(dialogues, handle)
    return split


@pytest.fixture
def data(tmp_path):
    split = write_split(tmp_path / "dev", SCHEMA, DIALOGUES)
    train = tmp_path / "train"
    train.mkdir()  # a train split that has the bakery: Grooming_1 is unseen
    (train / "schema.json").write_text(json.dumps([s for s in json.loads(SCHEMA.read_text())
                                                   if s["service_name"] == "Bakery_1"]))
    return split


def test_cases_are_read_from_the_dialogues_with_the_users_own_words(data):
    services = {s.service_name: s for s in load_schema(data / "schema.json")}
    openings, talks = cases(read_dialogues(data), services)
    assert [(o.service, o.intent, o.values) for o in openings] == [
        ("Bakery_1", "OrderCake", {"cake_flavor": "Lemon"}), ("Grooming_1", "FindSalons", {"city": "Portland"})]
    cake = talks[0]
    assert cake.target == {"cake_flavor": "Lemon", "pickup_date": "2019-03-05"}
    assert cake.answers["pickup_date"] == "March 5th"  # as the user wrote it, not the canonical value
    assert talks[1].recorded[0].results[0]["salon_name"] == "Shaggy Chic"


def _run(calls=None, failure=None) -> Run:
    run = Run(domain="bakery_1", today="2019-03-01")
    if calls is not None:
        run.plan = Plan(calls=[PlanCall(api=api, var="x", args=args) for api, args in calls], text="", planner_actions=[])
    run.failure = failure
    return run


def test_the_opening_scorer_counts_right_wrong_invented_and_asked(data, tmp_path):
    import_services(data / "schema.json", tmp_path / "packs")
    services = {s.service_name: s for s in load_schema(data / "schema.json")}
    opening = cases(read_dialogues(data), services)[0][0]
    with using_packs_root(tmp_path / "packs"):
        pack = load_pack("bakery_1")
    exact = score_opening(opening, _run([("order_cake", {"cake_flavor": PlanArg(value="Lemon"),
                                                         "pickup_date": PlanArg(get_info="pickup_date")})]), pack)
    assert exact.exact and exact.true_values == 1 and exact.given_values == 1
    invented = score_opening(opening, _run([("order_cake", {"cake_flavor": PlanArg(value="Lemon"),
                                                            "pickup_date": PlanArg(value="03/09/2019"),
                                                            "inscription": PlanArg(value="Hi", default=False)})]), pack)
    assert not invented.exact and len(invented.invented) == 2 and invented.asked_wrong == ["pickup_date"]
    wrong = score_opening(opening, _run([("order_cake", {"cake_flavor": PlanArg(value="Vanilla"),
                                                         "pickup_date": PlanArg(get_info="pickup_date")})]), pack)
    assert not wrong.exact and wrong.wrong and not wrong.true_values
    refused = score_opening(opening, _run(failure=Failure(stage="materialize", kind="out_of_domain", message="no")), pack)
    assert not refused.goal_right and refused.missed == ["cake_flavor='Lemon'"]


def test_a_value_that_is_the_apis_default_where_the_gold_has_none_is_no_invented_value(data, tmp_path):
    # SGD annotates nothing where the service's default applies; writing the default is the same call.
    import_services(data / "schema.json", tmp_path / "packs")
    with using_packs_root(tmp_path / "packs"):
        pack = load_pack("grooming_1")
    booking = Opening(dialogue_id="t_9", service="Grooming_1", intent="BookGrooming", text="...",
                      values={"salon_name": "Shaggy Chic", "appointment_date": "2019-03-05", "appointment_time": "10:00"})
    asked = {"salon_name": PlanArg(value="Shaggy Chic"), "appointment_date": PlanArg(value="2019-03-05"),
             "appointment_time": PlanArg(value="10:00")}
    api = pack.api_of_operation("BookGrooming")
    the_default = score_opening(booking, _run([(api, {**asked, "package": PlanArg(value="basic")})]), pack)
    assert the_default.exact and the_default.given_values == 3 and not the_default.invented
    another = score_opening(booking, _run([(api, {**asked, "package": PlanArg(value="Deluxe")})]), pack)
    assert not another.exact and another.invented == ["package='Deluxe'"]


# A user who answers the salon's question with a turn that also asks for nail trims, writes the town as
# locals do, and books after a search the dialogue's system also ran.
BOOKING = {"dialogue_id": "t_3", "services": ["Grooming_1"], "turns": [
    _user("Can I get my dog groomed?", "Grooming_1", "FindSalons", {}),
    _system("Where should I look?", "Grooming_1"),
    _user("Somewhere in PDX, and they should trim nails.", "Grooming_1", "FindSalons",
          {"city": ("PDX", "Portland"), "trims_nails": ("trim nails", "True")}),
    _system("Shaggy Chic trims nails.", "Grooming_1", ("FindSalons", {"city": "Portland", "trims_nails": "True"}),
            [{"salon_name": "Shaggy Chic", "city": "Portland", "trims_nails": "True"}]),
]}


@pytest.fixture
def booking(tmp_path):
    import_services(SCHEMA, tmp_path / "packs")
    services = {s.service_name: s for s in load_schema(SCHEMA)}
    with using_packs_root(tmp_path / "packs"):
        pack = load_pack("grooming_1")
    return cases(iter([BOOKING]), services)[1][0], pack


def test_the_simulated_user_answers_with_the_dialogues_own_turn_then_its_words(booking):
    case, pack = booking
    assert case.turns == {"city": "Somewhere in PDX, and they should trim nails.",
                          "trims_nails": "Somewhere in PDX, and they should trim nails."}
    assert case.written == {"city": ["PDX"], "trims_nails": ["trim nails"]}
    said = []

    def agent(message):  # asks the town twice, then has searched with what it heard the first time
        said.append(message)
        return {"kind": "ask", "slot": "city"} if len(said) < 3 else {"kind": "done"}

    result = simulate(case, pack, agent, lambda: [("find_salons", {"city": "PDX", "trims_nails": "True"})])
    assert said == ["Can I get my dog groomed?", "Somewhere in PDX, and they should trim nails.", "PDX"]
    assert result.success  # "PDX" is how the dialogue's user wrote Portland: the same value
    said.clear()
    words = simulate(case, pack, agent, lambda: [("find_salons", {"city": "Portland"})], user="words")
    assert said[1:] == ["PDX", "PDX"] and not words.success  # the nail trims were never said, so never searched
    with pytest.raises(ValueError, match="simulated user"):
        simulate(case, pack, agent, lambda: [], user="script")


def test_a_read_back_is_turned_down_for_a_call_the_dialogue_never_makes(booking):
    case, pack = booking
    target = {"api": "find_salons", "args": {"city": "PDX", "trims_nails": "True"}}
    other = {"api": "book_grooming", "args": {"salon_name": "Shaggy Chic"}}
    assert confirm_answer(case, pack, "find_salons", {"calls": [target]}).startswith("yes")
    assert confirm_answer(case, pack, "find_salons", {"calls": [target, other]}).startswith("no")
    # were a booking the dialogue's call, the search it also ran on the way would be fine
    assert confirm_answer(case, pack, "book_grooming", {"calls": [target]}).startswith("yes")
    wrong_town = {"api": "find_salons", "args": {"city": "Salem", "trims_nails": "True"}}
    assert confirm_answer(case, pack, "find_salons", {"calls": [wrong_town]}).endswith("PDX")


def test_sgdx_names_map_by_position(data, tmp_path):
    variant = json.loads(SCHEMA.read_text())
    variant[0]["service_name"] = "Grooming_15"
    variant[0]["slots"][0]["name"] = "town"
    variant[0]["intents"][0]["name"] = "SearchGroomers"
    variant[0]["intents"][0]["required_slots"] = ["town"]
    variant[0]["intents"][0]["result_slots"] = ["salon_name", "town", "trims_nails", "salon_phone"]
    path = tmp_path / "variant.json"
    path.write_text(json.dumps(variant))
    mapping = rename_map(load_schema(data / "schema.json"), load_schema(path))
    services = {s.service_name: s for s in load_schema(data / "schema.json")}
    grooming = cases(read_dialogues(data), services)[0][1]
    moved = renamed(grooming, *mapping["Grooming_1"])
    assert (moved.service, moved.intent, moved.values) == ("Grooming_15", "SearchGroomers", {"town": "Portland"})


def test_a_whole_run_with_the_real_model_reports_every_figure(data, tmp_path):
    import_services(data / "schema.json", tmp_path / "packs", services_to_import(data))
    summary = evaluate_sgd(data, tmp_path / "packs", translator="hf")
    by = summary["by"]
    assert list(by)[:3] == ["all", "seen", "unseen"] and {"Bakery_1", "Grooming_1"} <= set(by)
    assert by["all"]["openings"] == 2 and by["all"]["conversations"] == 2
    assert by["Bakery_1"]["probes"] == 1 and by["Grooming_1"]["probes"] == 1  # the other domain's opening
    assert by["seen"]["openings"] == 1 and by["unseen"]["openings"] == 1
    # loading is paid before the first timed request, once for the model and once per pack, and reported apart
    assert {"model", "bakery_1", "grooming_1"} <= set(summary["warm_up_s"]), summary["warm_up_s"]
    for row in by.values():
        for key in ("openings_exact", "goal_accuracy", "ood_refused", "conversation_success"):
            assert row[key] is None or 0 <= row[key] <= 1
    # the cake conversation: the opening gives the flavour, the user answers the date in their words
    failures = {f["dialogue_id"]: f for f in summary["failures"]["conversations"]}
    assert "t_1" not in failures, failures.get("t_1")
