"""Conversations with the real model carried out over real HTTP against Prism mock servers made from two
shared specs: every call is checked by Prism against its document (credentials included: the pet store's
reads go with its API key, its writes with its OAuth token), an identifier one call answers is the one the
next call is sent, and nothing runs before the read-back is confirmed."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.authoring.openapi_packs import import_openapi
from pipeline.packs.pack import using_packs_root
from pipeline.sessions.engine import SessionEngine
from tests.sessions.prism import PrismMock, prism_or_skip, servable

SPECS = Path(__file__).resolve().parents[3] / "shared" / "openapi"


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """Each spec imported as a pack whose base URL is its own Prism mock; credentials set for each scheme."""
    prism_or_skip()
    if not SPECS.is_dir():
        pytest.skip("the shared specs are not beside this checkout")
    root = tmp_path_factory.mktemp("packs")
    servers, secrets = {}, pytest.MonkeyPatch()
    try:
        for stem in ("petstore", "redocly-museum"):
            server = PrismMock(servable(SPECS / f"{stem}.yaml", root), root / f"{stem}.log")
            servers[stem] = server
            _, pack, _, _ = import_openapi(SPECS / f"{stem}.yaml", root, base_url=server.url)
            for auth in [pack.get("http_auth"), *pack.get("http_auths", {}).values()]:
                if auth:
                    secrets.setenv(auth["env"], "user:secret" if auth["scheme"] == "basic" else "secret-token")
        with using_packs_root(root):
            yield servers
    finally:
        secrets.undo()
        for server in servers.values():
            server.close()


def _converse(pack: str, opening: str):
    """The opening, then 'yes' to the read-back; returns the session state and every reply's kind."""
    engine = SessionEngine("hf", executor="http")
    state = engine.open(pack, "2026-05-04")
    replies = [engine.reply(state, opening)]
    if replies[-1].kind == "confirm":
        replies.append(engine.reply(state, "yes"))
    return state, replies


def test_a_ticket_bought_then_its_code_fetched_with_the_id_the_purchase_answered(served):
    museum = served["redocly-museum"]
    museum.mark()
    state, replies = _converse("redocly_museum", "buy a general admission ticket for June 3, send the "
                                                 "confirmation to kim@example.org, then show me its QR code")
    assert [r.kind for r in replies] == ["confirm", "done"], replies
    purchase, code = state.executed
    assert purchase.api == "buy_museum_tickets" and code.api == "get_ticket_code"
    assert purchase.args == {"ticket_type": "general", "ticket_date": "06/03/2026", "email": "kim@example.org"}
    assert museum.requests() == [("POST", "/tickets"), ("GET", f"/tickets/{purchase.output}/qr")]
    assert museum.violations() == []


def test_a_pet_added_with_the_web_address_of_its_photo_goes_with_the_oauth_token(served):
    store = served["petstore"]
    store.mark()
    state, replies = _converse("petstore", "add a cat called Tom, his photo is at https://pics.example.org/cats/tom.jpg")
    assert [r.kind for r in replies] == ["confirm", "done"], replies
    assert "https://pics.example.org/cats/tom.jpg" in replies[0].text  # read back whole before it runs
    [added] = state.executed
    assert added.api == "add_pet" and added.args["photo_urls"] == "https://pics.example.org/cats/tom.jpg"
    assert store.requests() == [("POST", "/pet")] and store.violations() == []


def test_an_order_placed_then_read_back_by_the_id_it_answered(served):
    store = served["petstore"]
    store.mark()
    state, replies = _converse("petstore", "order pet 12 for a customer and then show me the order")
    assert [r.kind for r in replies] == ["confirm", "done"], replies
    placed, read = state.executed
    assert (placed.api, placed.args) == ("place_order", {"pet_id": "12"}) and read.api == "get_order_by_id"
    assert store.requests() == [("POST", "/store/order"), ("GET", f"/store/order/{placed.output}")]
    assert store.violations() == []


def test_a_pet_found_by_its_status_is_read_back_by_its_id_before_it_is_deleted(served):
    """The list that picks the pet runs before the read-back, so the user confirms the very pet (its id)
    the delete will be sent, not a search; nothing with effects runs before the yes."""
    store = served["petstore"]
    store.mark()
    engine = SessionEngine("hf", executor="http")
    state = engine.open("petstore", "2026-05-04")
    reply = engine.reply(state, "delete the pets that are sold")
    assert reply.kind == "confirm", reply
    [found] = state.executed
    assert found.api == "find_pets_by_status" and found.args == {"status": "sold"}
    assert f"the pet id {found.output}" in reply.text and "the status sold" in reply.text
    assert store.requests() == [("GET", "/pet/findByStatus")]  # the read only (Prism logs no query)
    reply = engine.reply(state, "yes")
    assert reply.kind == "done", reply
    assert store.requests()[1:] == [("DELETE", f"/pet/{found.output}")] and store.violations() == []


SHOP = {
    "openapi": "3.0.3", "info": {"title": "Shop", "version": "1"},
    "paths": {
        "/products": {"get": {
            "operationId": "listProducts", "summary": "List products, found by words in their name",
            "parameters": [{"name": "query", "in": "query", "schema": {"type": "string"}}],
            "responses": {"200": {"description": "the products found", "content": {"application/json": {
                "schema": {"type": "object", "properties": {"data": {"type": "array", "items": {
                    "type": "object", "properties": {"id": {"type": "integer"}, "name": {"type": "string"}}}}}},
                "example": {"data": [{"id": 12, "name": "Blue Lamp"}, {"id": 40, "name": "Blue Desk Lamp"}]}}}}}}},
        "/products/{product_id}": {"delete": {
            "operationId": "deleteProduct", "summary": "Delete a product",
            "parameters": [{"name": "product_id", "in": "path", "required": True, "schema": {"type": "integer"}}],
            "responses": {"204": {"description": "deleted"}}}},
    },
}


def test_several_things_found_for_a_change_are_shown_and_the_one_chosen_is_acted_on(tmp_path):
    """The search that finds the product to delete finds two: the agent lists them and asks which (nothing
    is deleted on the first found unasked); "the second one" picks it, the read-back names its id, and the
    delete is sent that id. Over real HTTP, against a Prism mock of the spec, which answers with its example."""
    import json

    prism_or_skip()
    spec = tmp_path / "shop.json"
    spec.write_text(json.dumps(SHOP), encoding="utf-8")
    root = tmp_path / "packs"
    server = PrismMock(spec, tmp_path / "shop.log")
    try:
        import_openapi(spec, root, base_url=server.url)
        with using_packs_root(root):
            engine = SessionEngine("hf", executor="http")
            state = engine.open("shop", "2026-05-04")
            reply = engine.reply(state, "delete the product Blue Lamp")
            assert reply.kind == "ask" and reply.slot == "product_id", reply
            assert "1) Blue Lamp (id 12)" in reply.text and "2) Blue Desk Lamp (id 40)" in reply.text
            assert server.requests() == [("GET", "/products")]  # the search only: nothing deleted yet
            reply = engine.reply(state, "the second one")
            assert reply.kind == "confirm" and "the product id 40" in reply.text, reply
            reply = engine.reply(state, "yes")
            assert reply.kind == "done", reply
            assert server.requests()[1:] == [("DELETE", "/products/40")] and server.violations() == []
    finally:
        server.close()
