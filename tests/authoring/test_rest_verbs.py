"""A REST request's verbs against the API's own operations: a verb that is a word of an operation's name
asks for that operation, and a change no operation on the thing makes is refused with the reason (the
model only where a pipeline runs)."""


import pytest

from pipeline.retrieval.retrievers import get_retriever
from tests.authoring.spec_packs import imported_pack

_ID = [{"name": "payment_id", "in": "path", "required": True, "schema": {"type": "string"}}]
_CUSTOMER_ID = [{"name": "customer_id", "in": "path", "required": True, "schema": {"type": "integer"}}]
_OK = {"200": {"description": "ok", "content": {"application/json": {"schema": {
    "type": "object", "properties": {"id": {"type": "string"}, "status": {"type": "string"}}}}}}}
_LIST = {"200": {"description": "ok", "content": {"application/json": {"schema": {
    "type": "array", "items": {"type": "object", "properties": {"id": {"type": "string"}}}}}}}}

PAYMENTS = {"openapi": "3.0.3", "info": {"title": "Payments"}, "paths": {
    "/payments": {"get": {"operationId": "listPayments", "summary": "List payments", "responses": _LIST}},
    "/payments/{payment_id}": {"get": {"operationId": "getPayment", "summary": "Show one payment",
                                       "parameters": _ID, "responses": _OK}},
    "/payments/{payment_id}/authorize": {"post": {"operationId": "authorizePayment",
                                                  "summary": "Authorize a payment", "parameters": _ID,
                                                  "responses": _OK}},
    "/payments/{payment_id}/charge": {"post": {"operationId": "chargePayment", "summary": "Capture the funds",
                                               "parameters": _ID, "responses": _OK}},
    "/customers": {"post": {"operationId": "createCustomer", "summary": "Add a customer",
                            "requestBody": {"content": {"application/json": {"schema": {
                                "type": "object", "required": ["name"],
                                "properties": {"name": {"type": "string"}}}}}},
                            "responses": _OK}},
    "/customers/{customer_id}": {"get": {"operationId": "getCustomer", "summary": "Show one customer",
                                         "parameters": _CUSTOMER_ID, "responses": _OK}},
}}


@pytest.fixture
def payments(tmp_path):
    with imported_pack(tmp_path, "payments", PAYMENTS) as pack:
        yield pack


def test_a_verb_that_names_an_operation_asks_for_it_and_the_clause_pointed_at_is_its_context(payments):
    """"charge it" points back at the payment authorised: the charge of that payment (the verb is a word of
    `charge_payment`'s name), not a second authorisation; its words are its own clause, the payment's the
    clause before."""
    goals = get_retriever(payments).by_clause("authorise payment pay_d3e1f7 and then charge it")
    assert [g.goal for g in goals] == ["authorize_payment", "charge_payment"]
    assert goals[1].source == "charge it" and "pay_d3e1f7" in goals[1].context


def test_a_change_no_operation_on_the_thing_makes_is_refused_with_the_reason(payments):
    """The API adds and shows customers and deletes none: "delete customer 550" is refused and says so;
    adding or showing one is the API's, and so is a change of a thing it makes."""
    from pipeline.run import run_pipeline

    retriever = get_retriever(payments)
    assert retriever.change_not_made("delete customer 550 permanently") == "delete any customer"
    assert retriever.by_clause("delete customer 550 permanently") == []
    for words in ("show customer 550", "add a customer called Ann Lee", "charge payment pay_1",
                  "where is the customer that created payment pay_1?"):  # a question's change is asked about
        assert retriever.change_not_made(words) is None and retriever.by_clause(words), words
    run = run_pipeline("delete customer 550 permanently", "payments", translator="hf")
    assert run.failure.kind == "out_of_domain" and "no call that would delete any customer" in run.failure.message


def test_the_newest_one_of_a_list_is_read_by_its_identifier_from_the_list(payments):
    """"list the payments and open the newest one" asks no change of the thing pointed back at: a read of
    one of those the list found, not the list again."""
    goals = get_retriever(payments).by_clause("list the payments and open the newest one")
    assert [g.goal for g in goals] == ["list_payments", "get_payment"]


_ID_OF_FLAG = [{"name": "flag_id", "in": "path", "required": True, "schema": {"type": "string"}}]
FLAGS = {"openapi": "3.0.3", "info": {"title": "Feature flags"}, "paths": {
    "/flags": {"get": {"operationId": "listFlags", "summary": "List the feature flags", "responses": _LIST}},
    "/flags/{flag_id}": {
        "get": {"operationId": "getFlag", "summary": "Get one feature flag", "parameters": _ID_OF_FLAG, "responses": _OK},
        "patch": {"operationId": "updateFlag", "summary": "Update a feature flag", "parameters": _ID_OF_FLAG,
                  "requestBody": {"content": {"application/json": {"schema": {
                      "type": "object", "properties": {"name": {"type": "string"}, "archived": {"type": "boolean"}}}}}},
                  "responses": _OK},
        "delete": {"operationId": "deleteFlag", "summary": "Delete a feature flag", "parameters": _ID_OF_FLAG,
                   "responses": _OK}},
}}


@pytest.fixture
def flags(tmp_path):
    with imported_pack(tmp_path, "flags", FLAGS) as pack:
        yield pack


def test_to_archive_a_thing_is_to_change_it_and_a_change_to_a_thing_named_is_its_call(flags):
    """"archive flag ..." asks for the flag's update, not its delete; a clause that opens with a verb of a
    change and names the thing the API changes asks for that change, whatever else its words say."""
    retriever = get_retriever(flags)
    assert [g.goal for g in retriever.by_clause("archive flag 0c5e1d77, the experiment is over")] == ["update_flag"]
    words = "change the name of flag f2a8c6d4 to Search Autocomplete v2"
    assert retriever.names_its_change(words, "update_flag")
    assert not retriever.names_its_change(words, "get_flag") and not retriever.names_its_change(words, "delete_flag")
    assert not retriever.names_its_change("change the weather for tomorrow", "update_flag")  # no flag named
    assert [g.goal for g in retriever.by_clause(words)] == ["update_flag"]
