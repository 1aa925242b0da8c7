"""Requests to REST APIs as goal rows: paired with the operations their calls name in the imported pack,
every other operation of the API a negative, and added after SGD's turns as services of their own."""

import json

import numpy as np
import pytest
import yaml

from pipeline.authoring.request_corpus import corpus_from
from pipeline.language.rest_corpus import REST_CORPUS, RestCorpus, RestRequest, read_corpus
from pipeline.language.train import Corpus, Pairs, Tagged, with_rest

OK = {"200": {"description": "ok", "content": {"application/json": {"schema": {
    "type": "object", "properties": {"id": {"type": "integer"}, "title": {"type": "string"}}}}}}}
BOOKS = {
    "openapi": "3.0.3", "info": {"title": "Books"},
    "paths": {
        "/books": {"get": {"operationId": "listBooks", "summary": "List the books", "responses": OK},
                   "post": {"operationId": "addBook", "summary": "Add a book", "responses": OK,
                            "requestBody": {"content": {"application/json": {"schema": {
                                "type": "object", "required": ["title"],
                                "properties": {"title": {"type": "string"}}}}}}}},
        "/books/{bookId}": {"delete": {"operationId": "removeBook", "summary": "Remove a book", "responses": OK,
                                       "parameters": [{"name": "bookId", "in": "path", "required": True,
                                                       "schema": {"type": "integer"}}]}},
    },
}


def _documents(tmp_path, cases):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "books.json").write_text(json.dumps(BOOKS))
    requests = tmp_path / "requests.yaml"
    requests.write_text(yaml.safe_dump({"specs": {"books": cases}}))
    return tmp_path / "docs", requests


def test_calls_by_method_and_path_or_by_name_reach_the_imported_goals(tmp_path):
    documents, requests = _documents(tmp_path, [
        {"request": "throw out book 12", "calls": ["DELETE /books/{bookId}"]},
        {"request": "add Dune and then show me all of them", "calls": ["add_book", "GET /books"]},
        {"request": "how late is the shop open?", "calls": []}])
    corpus, left_out = corpus_from(documents, requests)
    assert left_out == []
    assert sorted(corpus.goals["books"]) == ["add_book", "list_books", "remove_book"]
    assert [r.goals for r in corpus.requests] == [["remove_book"], ["add_book", "list_books"], []]
    assert corpus.goals["books"]["remove_book"].startswith("remove book: Remove a book")


def test_a_call_the_document_does_not_have_is_an_error_not_a_wrong_pair(tmp_path):
    documents, requests = _documents(tmp_path, [{"request": "rename book 3", "calls": ["PATCH /books/{bookId}"]}])
    with pytest.raises(ValueError, match="no operation 'PATCH /books/{bookId}'"):
        corpus_from(documents, requests)


def test_values_are_kept_as_written_and_one_not_in_its_request_is_an_error(tmp_path):
    documents, requests = _documents(tmp_path, [
        {"request": "add the book Dune", "calls": ["POST /books"], "values": {"title": "Dune"}},
        {"request": "show me all the books", "calls": ["GET /books"]}])
    corpus, _ = corpus_from(documents, requests)
    assert [r.values for r in corpus.requests] == [{"title": "Dune"}, {}]
    saved = corpus.save(tmp_path / "corpus.json")
    rows = json.loads(saved.read_text())["requests"]
    assert rows[0]["values"] == {"title": "Dune"} and "values" not in rows[1]  # the file holds only what is given
    assert [r.values for r in read_corpus(saved).requests] == [{"title": "Dune"}, {}]
    requests.write_text(yaml.safe_dump({"specs": {"books": [
        {"request": "add the book Dune", "calls": ["POST /books"], "values": {"title": "Dune Messiah"}}]}}))
    with pytest.raises(ValueError, match="'Dune Messiah' is not written in"):
        corpus_from(documents, requests)


def test_each_request_meets_every_operation_of_its_api_and_strangers_of_others():
    corpus = RestCorpus(goals={"shop": {"a": "add order", "l": "list orders", "d": "delete order"},
                               "zoo": {"f": "feed animal", "c": "count animals"}},
                        requests=[RestRequest("shop", "cancel order 4", ["d"]),
                                  RestRequest("zoo", "is the zoo open on sunday", [])])
    texts, pairs = corpus.pairs(first_turn=100, foreign=1)
    assert texts == ["cancel order 4", "is the zoo open on sunday"]
    first = [(p.text, p.label) for p in pairs if p.turn == 100]
    assert sorted(first[:3]) == [("add order", 0), ("delete order", 1), ("list orders", 0)]
    assert first[3][0] in {"feed animal", "count animals"} and first[3][1] == 0
    second = [p for p in pairs if p.turn == 101]
    assert not any(p.label for p in second) and len(second) == 3  # out of scope: no operation is it


def test_rest_rows_come_after_the_turns_as_services_of_their_own():
    goal = Pairs(np.zeros((2, 384), np.float32), np.zeros((1, 384), np.float32), np.array([0, 0]),
                 np.array([1.0, 0.0], np.float32), np.array([0, 1]))
    empty = Tagged(np.zeros((0, 4)), np.zeros(0), np.zeros(0))
    corpus = Corpus(goal, goal, empty, ["Hotels_1", "Hotels_1"], np.array([False, False]))
    rest = RestCorpus(goals={"shop": {"a": "add order", "l": "list orders"}},
                      requests=[RestRequest("shop", "put in an order for 3 lamps", ["a"])])
    grown = with_rest(corpus, rest, held_out=0.0, seed=0)
    assert grown.services == ["Hotels_1", "Hotels_1", "rest:shop"]
    assert list(grown.goal.turn[2:]) == [2, 2] and list(grown.goal.labels[2:]) == [1.0, 0.0]
    assert grown.goal.right.shape[0] == 3  # the two operations' words after the one already there
    np.testing.assert_allclose(np.linalg.norm(grown.goal.x[2]), 1.0, atol=1e-3)  # the request, encoded
    assert list(grown.groups({"rest:shop"})) == [0, 0, 2]
    assert grown.slot is corpus.slot  # no values are marked in them


def test_the_packaged_corpus_pairs_each_request_with_operations_of_its_own_api():
    corpus = read_corpus(REST_CORPUS)
    assert len(corpus.goals) >= 15 and len(corpus.requests) >= 400
    for request in corpus.requests:
        assert set(request.goals) <= set(corpus.goals[request.api]), request


def test_the_command_adds_an_api_to_a_corpus_file_or_refuses_a_wrong_call(tmp_path):
    from typer.testing import CliRunner

    from nesyplan.cli import app

    documents, requests = _documents(tmp_path, [{"request": "throw out book 12", "calls": ["DELETE /books/{bookId}"]}])
    out = tmp_path / "corpus.json"
    RestCorpus(goals={"zoo": {"f": "feed animal"}}, requests=[RestRequest("zoo", "feed the lion", ["f"])]).save(out)
    command = ["rest-corpus", "--documents", str(documents), "--requests", str(requests), "--out", str(out)]
    result = CliRunner().invoke(app, command)
    assert result.exit_code == 0, result.output
    corpus = read_corpus(out)
    assert sorted(corpus.goals) == ["books", "zoo"]
    assert [(r.api, r.text, r.goals) for r in corpus.requests] == [("zoo", "feed the lion", ["f"]),
                                                                  ("books", "throw out book 12", ["remove_book"])]
    requests.write_text(yaml.safe_dump({"specs": {"books": [{"request": "x", "calls": ["PUT /shelves"]}]}}))
    refused = CliRunner().invoke(app, command)
    assert refused.exit_code == 2 and "no operation 'PUT /shelves'" in refused.output
    assert len(read_corpus(out).requests) == 2  # nothing written
