"""eval-sgd-cv: folds of whole domains, heads trained without a fold's services and reused only when made
for the same fold and settings, counts pooled across folds, and a whole fold played in its own process
with the real encoder, model and planner (a schema and dialogues of our own)."""

import json
import os

import pytest

from pipeline.authoring.sgd_packs import import_services
from pipeline.evaluation.cross_validation import cross_validate, make_folds, pooled, train_folds
from tests.evaluation.test_sgd_eval import DIALOGUES, SCHEMA, write_split
from tests.language.test_heads import CORPUS

TRAIN_SERVICES = ["Banks_1", "Buses_1", "Buses_2", "Calendar_1", "Events_1", "Events_2", "Flights_1", "Flights_2",
                  "Homes_1", "Hotels_1", "Hotels_2", "Hotels_3", "Media_1", "Movies_1", "Music_1", "Music_2",
                  "RentalCars_1", "RentalCars_2", "Restaurants_1", "RideSharing_1", "RideSharing_2", "Services_1",
                  "Services_2", "Services_3", "Travel_1", "Weather_1"]


@pytest.mark.parametrize("k", [2, 3, 5])
def test_folds_hold_out_every_service_once_and_never_split_a_domain(k):
    folds = make_folds(list(reversed(TRAIN_SERVICES)), k)
    assert sorted(s for f in folds for s in f) == sorted(TRAIN_SERVICES)
    home = {s.split("_")[0]: i for i, f in enumerate(folds) for s in f}
    assert all(home[s.split("_")[0]] == i for i, f in enumerate(folds) for s in f)
    assert max(map(len, folds)) - min(map(len, folds)) <= 3  # the largest domain has three services
    assert make_folds(TRAIN_SERVICES, k) == folds  # the order services come in changes nothing


def test_more_folds_than_domains_is_an_error():
    with pytest.raises(ValueError, match="2 domains"):
        make_folds(["Buses_1", "Buses_2", "Hotels_1"], 3)


def _summary(openings, exact, given, true, gold, probes, refused, talks, succeeded):
    return {"by": {"all": {"openings": openings, "probes": probes, "conversations": talks, "counts": {
        "exact": exact, "goal_right": openings, "true_values": true, "given_values": given, "gold_values": gold,
        "refused": refused, "succeeded": succeeded}}}}


def test_the_cv_figure_is_the_rate_of_the_pooled_counts_not_the_mean_of_the_folds():
    cv = pooled([_summary(2, 1, 4, 2, 4, 2, 2, 2, 0), _summary(3, 3, 1, 1, 6, 1, 0, 3, 3)])
    assert cv["openings"] == 5 and cv["openings_exact"] == 0.8  # the folds' mean would say 0.75
    assert cv["slot_precision"] == 0.6 and cv["slot_recall"] == 0.3 and cv["ood_refused"] == round(2 / 3, 4)
    assert cv["conversation_success"] == 0.6


@pytest.fixture
def train(tmp_path):
    return write_split(tmp_path / "train", SCHEMA, [*CORPUS, *DIALOGUES])


def test_a_folds_heads_are_made_without_its_services_and_reused_only_for_the_same_settings(train, tmp_path):
    folds = make_folds(["Bakery_1", "Grooming_1"], 2)
    assert folds == [["Bakery_1"], ["Grooming_1"]]
    work = tmp_path / "heads"
    first = train_folds(train, folds, work, [1], epochs=1)
    made = json.loads((work / "fold1" / "fold.json").read_text())
    assert made["key"]["held_out"] == ["Grooming_1"] and not (work / "fold0").exists()
    # every grooming turn is a service the heads did not learn from; only the bakery's were learned
    assert first[1]["goal"]["unseen_services"]["pairs"] > 0
    everything = train_folds(train, [[], ["Bakery_1", "Grooming_1"]], tmp_path / "all", [0], epochs=1)
    assert 0 < first[1]["goal"]["pairs"] < everything[0]["goal"]["pairs"]
    stamp = {f.name: f.stat().st_mtime_ns for f in (work / "fold1").iterdir()}
    assert train_folds(train, folds, work, [1], epochs=1) == first  # the same fold and settings: kept
    assert {f.name: f.stat().st_mtime_ns for f in (work / "fold1").iterdir()} == stamp
    train_folds(train, folds, work, [1], epochs=2)  # other settings: made again
    assert json.loads((work / "fold1" / "fold.json").read_text())["key"]["epochs"] == 2


def test_a_fold_is_played_against_packs_made_with_its_own_heads(train, tmp_path):
    result = cross_validate(train, import_services, k=2, only=[1], work=tmp_path / "heads", epochs=1,
                            options={"limit": 2, "probes": 1, "translator": "hf"})
    assert result["played"] == [1] and [r["held_out"] for r in result["per_fold"]] == [["Grooming_1"]]
    by = result["per_fold"][0]["summary"]["by"]
    assert "seen" not in by and by["unseen"]["openings"] == by["all"]["openings"] == 2  # held out, so unseen
    assert result["cv"]["openings"] == 2 and result["cv"]["counts"] == by["all"]["counts"]
    # only a dialogue whose system made a call is a conversation: the salon search of DIALOGUES
    assert result["cv"]["conversations"] == 1 and 0 <= result["cv"]["openings_exact"] <= 1
    assert "NESYPLAN_LANGUAGE_WEIGHTS" not in os.environ  # the fold's heads were set in its own process only
