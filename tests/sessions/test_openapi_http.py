"""Bring your own API, end to end: the restaurant test server's own generated `/openapi.json` is imported
at test time (`import-openapi`), and a conversation with the real model books through the server over real
HTTP, the found restaurant and the checked availability flowing into the booking."""

import httpx
import pytest

from pipeline.authoring.openapi_packs import import_openapi
from pipeline.packs.pack import load_pack, using_packs_root
from pipeline.sessions.engine import SessionEngine
from tests.sessions.test_http_executor import RestaurantApi
from tests.harness import stop

ANSWERS = {"name": "The Oak Room", "party_size": "4", "date": "March 14", "time": "7pm",
           "booking_name": "Ana Lopez", "phone": "617-555-0199"}


@pytest.fixture(scope="module")
def api(tmp_path_factory):
    server = RestaurantApi(tmp_path_factory.mktemp("restaurant"))
    yield server
    stop(server.process)


@pytest.fixture(scope="module")
def packs(api, tmp_path_factory):
    root = tmp_path_factory.mktemp("packs")
    spec = root / "openapi.json"
    spec.write_text(httpx.get(api.url + "/openapi.json").text, encoding="utf-8")
    import_openapi(spec, root, name="restaurant_api", base_url=api.url)
    with using_packs_root(root):
        yield root


def test_the_apps_own_spec_makes_a_pack_with_bindings_and_dataflow(packs, api):
    pack = load_pack("restaurant_api")
    apis = pack.spec.apis
    assert set(apis) == {"find_restaurant", "check_availability", "book_table"}  # FastAPI's suffixes cut
    assert apis["find_restaurant"].http.query == {"name": "name"} and not apis["find_restaurant"].effects
    assert apis["check_availability"].http.path == "/restaurants/{restaurant_id}/availability"
    assert apis["book_table"].effects and apis["book_table"].http.output == "id"
    assert pack.spec.arguments["restaurant_id"].accepts_output == ["find_restaurant_result"]
    assert pack.spec.arguments["availability_id"].accepts_output == ["check_availability_result"]
    # the booking's `name` is a person's, not the restaurant's the search takes
    assert "booking_name" in apis["book_table"].arguments and "name" in apis["find_restaurant"].arguments
    assert pack.spec.http_base_url == api.url


def test_a_conversation_books_through_the_imported_api(packs, api):
    api.faults()
    before = len(api.rows("bookings"))
    engine = SessionEngine("hf", executor="http")
    state = engine.open("restaurant_api", "2025-03-10")
    reply = engine.reply(state, "Find the restaurant The Oak Room. Check availability there for 4 people on "
                                "March 14 at 7pm. Then book the table.")
    asked = []
    while reply.kind == "ask" and len(asked) < 8:
        assert reply.slot in ANSWERS, reply
        asked.append(reply.slot)
        reply = engine.reply(state, ANSWERS[reply.slot])
    assert "restaurant_id" not in asked and "availability_id" not in asked  # ids flow, never asked
    assert reply.kind == "confirm" and len(api.rows("bookings")) == before, reply  # read back, nothing run yet
    assert "Ana Lopez" in reply.text and "617-555-0199" in reply.text
    reply = engine.reply(state, "yes")
    assert reply.kind == "done", reply
    assert [c.api for c in state.executed] == ["find_restaurant", "check_availability", "book_table"]
    booked = api.rows("bookings")
    assert len(booked) == before + 1 and booked[-1][3:] == ("Ana Lopez", "617-555-0199")
    availability = dict((row[0], row[1:]) for row in api.rows("availability"))[booked[-1][2]]
    assert availability == ("r2", 4, "2025-03-14", "19:00")  # the found id; the day sent as ISO 8601
    assert state.executed[-1].output == booked[-1][0]
