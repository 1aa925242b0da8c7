"""The request corpus as an `eval-openapi` set: each value the corpus gives under the document's name goes
under the argument the import made of it, read as its normaliser reads it; a name no argument takes is
left out and counted, never put under another argument."""

import json

import yaml

from pipeline.authoring.corpus_requests import corpus_set
from pipeline.evaluation.openapi import load_requests
from pipeline.language.rest_corpus import RestCorpus, RestRequest

OK = {"200": {"description": "ok", "content": {"application/json": {"schema": {
    "type": "object", "properties": {"id": {"type": "integer"}, "title": {"type": "string"}}}}}}}
LOANS = {
    "openapi": "3.0.3", "info": {"title": "Loans"},
    "paths": {
        "/loans": {"post": {"operationId": "openLoan", "summary": "Lend a book", "responses": OK,
                            "requestBody": {"content": {"application/json": {"schema": {
                                "type": "object", "required": ["bookTitle", "dueDate"],
                                "properties": {"bookTitle": {"type": "string"},
                                               "dueDate": {"type": "string", "format": "date"}}}}}}}},
        "/loans/{id}": {"delete": {"operationId": "closeLoan", "summary": "Close a loan", "responses": OK,
                                   "parameters": [{"name": "id", "in": "path", "required": True,
                                                   "schema": {"type": "integer"}}]}},
    },
}


def _corpus(requests):
    return RestCorpus(goals={"loans": {}}, requests=[RestRequest("loans", text, goals, values)
                                                     for text, goals, values in requests])


def test_values_go_under_the_imported_arguments_read_as_their_normalisers_read_them(tmp_path):
    (tmp_path / "loans.json").write_text(json.dumps(LOANS))
    made = corpus_set(_corpus([
        ("lend Dune, due back june 12", ["open_loan"], {"bookTitle": "Dune", "dueDate": "june 12"}),
        ("close loan 31", ["close_loan"], {"id": "31"}),
        ("close a loan of mine", ["close_loan"], {}),
        ("what is the weather", [], {})]), tmp_path, ["loans"], today="2026-05-04")
    cases = made.specs["loans"]
    assert [c["calls"] for c in cases] == [["open_loan"], ["close_loan"], ["close_loan"], []]
    title, due = sorted(cases[0]["values"])  # the importer's names for the body's two fields
    assert (cases[0]["values"][title], cases[0]["values"][due]) == ("Dune", "06/12/2026")
    assert list(cases[1]["values"].values()) == ["31"] and "values" not in cases[2]
    assert made.values_left_out == [] and made.apis_left_out == []
    written = tmp_path / "set.yaml"
    written.write_text(yaml.safe_dump(made.as_requests()))
    today, specs = load_requests(written)  # eval-openapi reads what it writes
    assert today == "2026-05-04" and [c.request for c in specs["loans"]][1] == "close loan 31"


def test_a_name_no_argument_takes_is_left_out_and_a_missing_document_named(tmp_path):
    (tmp_path / "loans.json").write_text(json.dumps(LOANS))
    made = corpus_set(_corpus([("lend Dune to Ann", ["open_loan"], {"bookTitle": "Dune", "borrower": "Ann"})]),
                      tmp_path, ["loans", "shelves"])
    assert list(made.specs["loans"][0]["values"].values()) == ["Dune"]
    assert made.values_left_out == ["loans: borrower='Ann' (lend Dune to Ann)"]
    assert made.apis_left_out == ["shelves: no document"]
