"""The language component's parts that need no trained weights: the encoder's spans, the numpy head
against its torch twin, the training corpus read from SGD-format dialogues, and a training run end to end
on a small corpus written here (a schema of our own, words of our own)."""

from pathlib import Path

import numpy as np
import pytest
import torch

from pipeline.language.encoder import encode
from pipeline.language.heads import PairHead, span_features
from pipeline.language.readings import Readings
from pipeline.language.sgd_corpus import goal_pairs, read_turns, read_wordings, slot_pairs
from pipeline.language.spans import BEGIN, INSIDE, OUTSIDE, SpanHead, piece_features, piece_labels
from pipeline.language.train import _module, tagger_module, tagger_weights, train_language, weights
from pipeline.packs.sgd_schema import load_schema
from tests.evaluation.test_sgd_eval import write_split

SCHEMA = Path(__file__).resolve().parents[1] / "authoring" / "fixtures" / "grooming_schema.json"


def test_a_span_is_read_off_the_pieces_of_its_own_characters():
    text = "take me from Lisbon to Porto"
    encoded = encode([text])[0]
    lisbon, porto = text.index("Lisbon"), text.index("Porto")
    a = encoded.span_vector(lisbon, lisbon + 6)
    b = encoded.span_vector(porto, porto + 5)
    assert a.shape == (384,) and not np.allclose(a, b)
    assert np.isclose(np.linalg.norm(encoded.sentence), 1.0, atol=1e-4)
    before, after = encoded.context_vectors(porto, porto + 5)
    assert np.abs(before).sum() > 0 and np.abs(after).sum() == 0  # nothing follows the last word
    assert np.abs(encoded.span_vector(len(text) + 5, len(text) + 9)).sum() == 0  # no piece there
    assert span_features(encoded, lisbon, lisbon + 6).shape == (4 * 384,)


@pytest.mark.parametrize("tied", [True, False])
def test_the_numpy_head_reads_what_its_torch_twin_computes(tied):
    torch.manual_seed(1)
    width = 384 if tied else 4 * 384
    twin = _module(width, 384, tied).eval()
    head = PairHead({**weights(twin, tied), "threshold": np.array(0.5)})
    x, y = torch.randn(5, width), torch.randn(3, 384)
    with torch.no_grad():
        expected = torch.sigmoid(torch.stack([twin(x, y[j].expand(5, -1)) for j in range(3)], dim=1)).numpy()
    got = head.probabilities(x.numpy(), head.project_right(y.numpy()))
    assert got.shape == (5, 3)
    assert np.allclose(got, expected, atol=2e-2)  # the weights are stored in float16


def test_the_span_head_reads_what_its_torch_twin_computes_and_proposes_runs_of_words():
    torch.manual_seed(2)
    twin = tagger_module(3 * 384).eval()
    head = SpanHead({**tagger_weights(twin), "threshold": np.array(0.5)})
    encoded = encode(["two seats by the window at Copper Finch"])[0]
    with torch.no_grad():
        expected = torch.softmax(twin(torch.from_numpy(piece_features(encoded.pieces))), dim=1).numpy()
    got = head.piece_probabilities(encoded)
    assert got.shape == (len(encoded.pieces), 3) and np.allclose(got, expected, atol=2e-2)
    for p in head.proposals(encoded):  # whatever it proposes is whole words of the text
        words = encoded.text[p.start:p.end].split()
        assert words and all(w in encoded.text.split() for w in words) and 0.5 <= p.probability <= 1


def test_piece_labels_mark_the_first_piece_of_a_value_and_the_rest_of_it():
    encoded = encode(["dinner at Bella Notte tonight"])[0]
    start = encoded.text.index("Bella")
    labels = piece_labels(encoded.offsets, [(start, start + len("Bella Notte"))])
    inside = [i for i, (a, b) in enumerate(encoded.offsets) if a >= start and b <= start + 11]
    assert labels[inside[0]] == BEGIN and all(labels[i] == INSIDE for i in inside[1:])
    assert sum(labels != OUTSIDE) == len(inside)


def _user(text, intent=None, informs=(), spans=(), active=None):
    actions = [{"act": "INFORM_INTENT", "slot": "intent", "values": [intent], "canonical_values": [intent]}] if intent else []
    actions += [{"act": "INFORM", "slot": s, "values": [v], "canonical_values": [v]} for s, v in informs]
    slots = [{"slot": s, "start": text.index(w), "exclusive_end": text.index(w) + len(w)} for s, w in spans]
    return {"speaker": "USER", "utterance": text, "frames": [{
        "service": "Grooming_1", "slots": slots, "actions": actions,
        "state": {"active_intent": active or intent or "NONE", "requested_slots": [], "slot_values": {}}}]}


CORPUS = [
    {"dialogue_id": f"c_{i}", "services": ["Grooming_1"], "turns": [
        _user(f"I want to get my two dogs groomed in {city}", "FindSalons", [("pet_count", "2")],
              [("city", city)]),
        {"speaker": "SYSTEM", "utterance": "Which day?", "frames": [{"service": "Grooming_1", "slots": [],
                                                                     "actions": []}]},
        _user(f"{day} at the {salon} please", None, [], [("appointment_date", day), ("salon_name", salon)],
              active="BookGrooming"),
    ]}
    for i, (city, day, salon) in enumerate([("Tacoma", "Monday", "Furry Cuts"), ("Eugene", "Friday", "Paw Spa"),
                                            ("Salem", "tomorrow", "Wag Town"), ("Boise", "Sunday", "Fluff Hut")])
]


def test_turns_and_pairs_come_from_the_corpus_own_annotations():
    services = {s.service_name: s for s in load_schema(SCHEMA)}
    turns = read_turns(iter(CORPUS), services)
    opening = next(t for t in turns if t.starts == "FindSalons")
    # a categorical value written as a word is found where the turn writes it
    assert ("pet_count", "two") in {(s, opening.text[a:b]) for a, b, s in opening.spans}
    wordings = read_wordings([SCHEMA])
    goals = goal_pairs(turns, wordings)
    labels = {(p.turn, p.text.split(":")[0]): p.label for p in goals}
    k = turns.index(opening)
    assert labels[(k, "find salons")] == 1 and labels[(k, "book grooming")] == 0
    # intents of another domain are negatives; a turn that starts nothing is no request for its active intent
    assert any(p.turn == k and p.text.startswith("order cake") and p.label == 0 for p in goals)
    answer = next(i for i, t in enumerate(turns) if t.starts is None)
    assert {p.label for p in goals if p.turn == answer} == {0}
    for p in slot_pairs(turns, wordings):
        values = [(a, b) for a, b, _ in turns[p.turn].spans]
        if p.label == 0 and not any((p.start, p.end) == v for v in values):
            assert not any(a < p.end and p.start < b for a, b in values)  # a non-value is outside every value


def test_training_writes_heads_that_score_a_pack_and_report_held_out_figures(tmp_path):
    split = write_split(tmp_path / "train", SCHEMA, CORPUS)
    report = train_language(split, tmp_path / "heads", epochs=2, held_out=0.25, exclude_services=["Bakery_1"])
    assert report.turns == 8 and len(report.written) == 4 and report.written[3].endswith("aliases.yaml")
    assert report.span.pairs > 0 and set(report.span.held_out) <= {"spans", "precision", "recall", "overlap_recall"}
    assert report.goal.pairs > 0 and set(report.goal.held_out) == {"pairs", "precision", "recall", "accuracy"}
    for path in report.written[:2]:
        head = PairHead.load(Path(path))
        width = 384 if head.tied else 4 * 384
        p = head.probabilities(np.ones((2, width), np.float32), head.project_right(np.ones((3, 384), np.float32)))
        assert p.shape == (2, 3) and ((0 <= p) & (p <= 1)).all()


def test_readings_keep_each_span_and_value_once_and_say_why_one_was_dropped():
    r = Readings("city", "from Lisbon to Porto")
    r.add((5, 11))
    r.add((5, 11))
    r.add((15, 20), "Porto")
    assert r.strings() == ["Lisbon", "Porto"]
    r.drop(r.items[0], "the value of origin")
    assert r.strings() == ["Porto"] and r.items[0].why == "the value of origin" and r.items[0].source == r.text


def test_other_names_of_a_value_are_kept_only_when_they_hold_across_services(tmp_path):
    import json

    from pipeline.language.sgd_corpus import read_aliases

    def service(name, slot):
        return {"service_name": name, "description": "", "intents": [],
                "slots": [{"name": slot, "description": "", "is_categorical": False, "possible_values": []}]}

    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps([service("Ferries_1", "port"), service("Taxis_1", "dropoff"),
                                  service("Cafes_1", "town"), service("Bakes_1", "flavour")]))
    services = {s.service_name: s for s in load_schema(schema)}

    def turn(service_name, slot, said, canonical):
        action = {"act": "INFORM", "slot": slot, "values": [said], "canonical_values": [canonical]}
        return {"speaker": "USER", "utterance": said, "frames": [{"service": service_name, "actions": [action]}]}

    turns = [turn("Ferries_1", "port", "Hfx", "Halifax"), turn("Taxis_1", "dropoff", "hfx", "Halifax"),
             turn("Cafes_1", "town", "HFX", "Halifax"),  # three services say so: kept
             turn("Bakes_1", "flavour", "choc", "Chocolate"), turn("Bakes_1", "flavour", "choc", "Chocolate"),
             turn("Ferries_1", "port", "the 3rd", "2019-03-03")]  # one service's word; a date
    assert read_aliases([{"turns": turns}], services) == {"hfx": "Halifax"}
    assert read_aliases([{"turns": turns}], services, min_services=1) == {"choc": "Chocolate", "hfx": "Halifax"}


def test_other_words_for_a_listed_value_are_kept_only_when_they_hold_across_services(tmp_path):
    import json

    from pipeline.language.sgd_corpus import read_value_words

    def service(name, slot, values):
        return {"service_name": name, "description": "", "intents": [],
                "slots": [{"name": slot, "description": "", "is_categorical": True, "possible_values": values}]}

    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps([service("Ferries_1", "deck", ["Upper", "Lower"]),
                                  service("Buses_7", "seat_level", ["Upper", "Lower"]),
                                  service("Cafes_1", "roast", ["Dark", "Light"])]))
    services = {s.service_name: s for s in load_schema(schema)}

    def turn(service_name, slot, said, value):
        action = {"act": "INFORM", "slot": slot, "values": [value]}
        return {"speaker": "USER", "utterance": said, "frames": [{"service": service_name, "actions": [action]}]}

    turns = [*[turn("Ferries_1", "deck", "a seat up top please", "Upper")] * 3,
             *[turn("Buses_7", "seat_level", "somewhere up top", "Upper")] * 3,  # two services: kept
             *[turn("Cafes_1", "roast", "bold", "Dark")] * 6,  # one service's word
             turn("Ferries_1", "deck", "the upper deck", "Upper"),  # written: says nothing of other words
             *[turn(s, slot, "a seat please", v) for s, slot, v in (("Ferries_1", "deck", "Lower"),
                                                                      ("Buses_7", "seat_level", "Lower"))] * 2]
    assert read_value_words([{"turns": turns}], services) == {"upper": ["top"]}  # "seat" says no one value
    assert read_value_words([{"turns": turns}], services, min_services=1) == {"dark": ["bold"], "upper": ["top"]}


def test_a_place_written_by_another_name_is_that_place():
    from pipeline.values.normalizers import title_text

    assert title_text("SF") == "San Francisco" and title_text("seattle, wa") == "Seattle"
    assert title_text("LA Fitness") == "LA Fitness" and title_text("bella notte") == "Bella Notte"
