"""Words in quotes are one value, single quotes as double ones (not an apostrophe), a request is never cut
into clauses inside them, and the name of an argument right before the quotes says whose value they are."""

import pytest

from pipeline.language.readers import QUOTED, quoted_span
from pipeline.retrieval.retrievers import get_retriever
from tests.authoring.spec_packs import imported_pack

MAILING = {"openapi": "3.0.3", "info": {"title": "Mailing lists"}, "paths": {
    "/lists": {"get": {"operationId": "listMailingLists", "summary": "List the mailing lists",
                       "responses": {"200": {"description": "ok"}}}},
    "/lists/{list_id}/messages": {"post": {
        "operationId": "sendMessage", "summary": "Send a message to a mailing list",
        "parameters": [{"name": "list_id", "in": "path", "required": True, "schema": {"type": "integer"}}],
        "requestBody": {"content": {"application/json": {"schema": {
            "type": "object", "required": ["subject", "body"],
            "properties": {"subject": {"type": "string", "description": "the message's subject line"},
                           "body": {"type": "string", "description": "the text of the message"}}}}}},
        "responses": {"200": {"description": "ok"}}}},
}}


@pytest.fixture
def mailing(tmp_path):
    with imported_pack(tmp_path, "mailing", MAILING) as pack:
        yield pack


def test_single_quotes_around_words_are_a_value_and_an_apostrophe_is_not():
    text = "set the title to 'Q3 roadmap (final)', it's the users' list, and note 'don't wait'"
    assert [text[slice(*quoted_span(m))] for m in QUOTED.finditer(text)] == ["Q3 roadmap (final)", "don't wait"]


def test_a_request_is_not_cut_into_clauses_inside_quotes(mailing):
    clauses = get_retriever(mailing).clauses(
        "post to list 37 with subject 'Bake sale: results!' and body 'We raised $1,240, thank you all!'")
    assert clauses == ["post to list 37 with subject 'Bake sale: results!'", "body 'We raised $1,240, thank you all!'"]


def test_the_name_before_the_quotes_says_whose_value_they_are(mailing):
    from pipeline.run import run_pipeline

    run = run_pipeline("send a message to list 37 with subject 'Bake sale results' and body 'We raised $1,240, thank you all!'",
                       "mailing", translator="hf")
    assert run.plan is not None, run.failure
    (call,) = run.plan.calls
    assert call.api == "send_message"
    assert {a: b.value for a, b in call.args.items()} == {
        "list_id": "37", "subject": "Bake sale results", "body": "We raised $1,240, thank you all"}  # as free text is sent: no closing mark
