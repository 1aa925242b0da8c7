"""The retrieval encoder trained on requests to many APIs: an imported API's goals are retrieved with it,
at a threshold raised by as much as its scores run higher; a pack of another kind keeps the packaged one."""

import json

import pytest

from pipeline.authoring.openapi_packs import import_openapi
from pipeline.language.encoder import embedding_model
from pipeline.language.rest_corpus import RestCorpus, RestRequest
from pipeline.packs.pack import load_pack, using_packs_root
from pipeline.retrieval.api_encoder import (ADAPTER, api_retrieval_model, cross_validation_figures, dense_shift,
                                            has_adapter, training_triples)
from pipeline.retrieval.retrievers import FIRST_THRESHOLD, NEXT_THRESHOLD, HybridRetriever, build_retriever
from pipeline.settings import settings

OK = {"200": {"description": "ok"}}
NOTES = {"openapi": "3.0.3", "info": {"title": "Notes"}, "paths": {
    "/notes": {"get": {"operationId": "listNotes", "summary": "List notes", "responses": OK}},
    "/notes/{noteId}": {"delete": {"operationId": "deleteNote", "summary": "Delete a note", "responses": OK,
                                   "parameters": [{"name": "noteId", "in": "path", "required": True,
                                                   "schema": {"type": "integer"}}]}}}}


@pytest.fixture
def notes(tmp_path):
    (tmp_path / "notes.json").write_text(json.dumps(NOTES))
    import_openapi(tmp_path / "notes.json", tmp_path / "packs", "notes")
    with using_packs_root(tmp_path / "packs"):
        yield load_pack("notes")


@pytest.mark.skipif(not has_adapter(), reason="no trained encoder shipped")
def test_an_imported_api_is_retrieved_with_the_trained_encoder_at_its_own_threshold(notes):
    retriever = build_retriever(notes, "hybrid")
    assert retriever.dense.model is api_retrieval_model()
    raised = dense_shift() * (1 - HybridRetriever.SPARSE_WEIGHT)
    assert retriever.first_threshold == pytest.approx(FIRST_THRESHOLD + raised)
    assert retriever.next_threshold == pytest.approx(NEXT_THRESHOLD + raised)
    assert retriever.rank("throw away note 12")[0].goal == "delete_note"


def test_turned_off_or_asked_for_the_packaged_model_it_is_not_used(notes, monkeypatch):
    assert build_retriever(notes, "dense", model="packaged").model is embedding_model()
    monkeypatch.setenv("NESYPLAN_API_RETRIEVAL", "false")
    settings.cache_clear()
    try:
        retriever = build_retriever(notes, "dense")
    finally:
        monkeypatch.delenv("NESYPLAN_API_RETRIEVAL")
        settings.cache_clear()
    assert retriever.model is embedding_model() and retriever.first_threshold == FIRST_THRESHOLD


def test_a_pack_that_is_no_imported_api_keeps_the_packaged_model():
    retriever = build_retriever(load_pack("quickbooks"), "dense")
    assert retriever.model is embedding_model()


def test_the_hard_negative_is_the_operation_the_model_confuses_the_request_with():
    corpus = RestCorpus(goals={"shop": {"a": "add order", "l": "list orders", "d": "delete order"}},
                        requests=[RestRequest("shop", "cancel order 4", ["d"]), RestRequest("shop", "hi", [])])
    near = training_triples(corpus, set(), 0, nearness=lambda text, words: [w == "add order" for w in words])
    assert near == [("cancel order 4", "delete order", "add order")]
    assert training_triples(corpus, {"shop"}, 0) == []


def test_the_threshold_takes_in_as_many_unseen_requests_as_the_packaged_model_did():
    def row(goals, packaged, trained, right=True):
        best = goals[0] if goals and right else "other"
        return {"api": "a", "goals": goals, "packaged": {"best": best, "score": packaged},
                "trained": {"best": goals[0] if goals else "other", "score": trained}}

    rows = [row(["x"], 0.5, 0.8), row(["x"], 0.35, 0.7), row(["x"], 0.2, 0.6, right=False), row(["x"], 0.4, 0.75),
            row([], 0.45, 0.62), row([], 0.25, 0.5)]
    figures = cross_validation_figures(rows, FIRST_THRESHOLD)
    # the packaged model took 3 of 4 in at 0.30: the trained one's threshold is its 25% quantile, 0.675
    assert figures["dense_shift"] == pytest.approx(0.675 - FIRST_THRESHOLD, abs=1e-3)
    assert figures["packaged"] == {"top1": 0.75, "taken_in": 0.75, "refused": 0.5}
    assert figures["trained"] == {"top1": 1.0, "taken_in": 0.75, "refused": 1.0}


def test_the_shipped_encoder_is_small_and_says_how_it_was_measured():
    if not has_adapter():
        pytest.skip("no trained encoder shipped")
    assert sum(p.stat().st_size for p in ADAPTER.iterdir()) < 3_000_000
    calibration = json.loads((ADAPTER / "calibration.json").read_text())
    assert calibration["cross_validation"]["apis"] >= 15


def test_a_fit_writes_adapters_that_load_over_the_packaged_model(tmp_path):
    import numpy as np

    from pipeline.retrieval.api_encoder import _fit, _load

    corpus = RestCorpus(goals={"shop": {"a": "add order", "l": "list orders", "d": "delete order"},
                               "zoo": {"f": "feed animal", "w": "weigh animal"}},
                        requests=[RestRequest("shop", "cancel order 4", ["d"]), RestRequest("shop", "new order", ["a"]),
                                  RestRequest("zoo", "give the lion dinner", ["f"]),
                                  RestRequest("zoo", "how heavy is the bear", ["w"])])
    # a few steps: the first is warm-up, at a rate of nothing, and the adapters start at no change
    assert _fit(corpus, tmp_path, exclude=set(), epochs=4, batch_size=2, seed=0) == 4
    assert has_adapter(tmp_path)
    texts = ["cancel order 4", "delete order"]
    trained = _load(tmp_path).encode(texts, normalize_embeddings=True)
    packaged = embedding_model().encode(texts, normalize_embeddings=True)
    assert not np.allclose(trained, packaged, atol=1e-4)  # the adapters changed what it reads
    with pytest.raises(ValueError, match="no request to learn from"):
        _fit(corpus, tmp_path / "none", exclude={"shop", "zoo"}, epochs=1, batch_size=4, seed=0)


def test_the_folds_rank_each_api_only_by_a_training_that_left_it_out_and_can_write_their_rows(tmp_path):
    from pipeline.retrieval.api_encoder import train_api_retriever

    corpus = RestCorpus(goals={"shop": {"a": "add order", "d": "delete order"},
                               "zoo": {"f": "feed animal", "w": "weigh animal"}},
                        requests=[RestRequest("shop", "cancel order 4", ["d"]), RestRequest("shop", "new order", ["a"]),
                                  RestRequest("zoo", "give the lion dinner", ["f"]),
                                  RestRequest("zoo", "is the zoo open late", [])])
    rows = tmp_path / "rows.json"
    report = train_api_retriever(corpus, 0.3, tmp_path / "adapters", epochs=1, batch_size=2, folds=2, rows_out=rows)
    written = json.loads(rows.read_text())
    assert [(r["api"], r["goals"]) for r in written] == [(r.api, r.goals) for r in corpus.requests]
    assert all(r["trained"]["best"] in corpus.goals[r["api"]] for r in written)
    assert report.cross_validation["one_operation"] == 3 and report.cross_validation["out_of_scope"] == 1
    assert json.loads((tmp_path / "adapters" / "calibration.json").read_text())["cross_validation"] is not None
