"""Values an imported API's request gives, read where the words say whose they are: after the word of what a
path identifies, after more of an argument's name than another's, after "rename ... to"; and a count of
parts read from the thing that holds them (real model, clingo and Fast Downward)."""

import json
from contextlib import contextmanager
from datetime import date

import pytest

from pipeline.authoring.openapi_packs import import_openapi
from pipeline.packs.pack import load_pack, using_packs_root
from tests.authoring.spec_packs import imported_pack


def _answer(schema):
    return {"200": {"description": "ok", "content": {"application/json": {"schema": schema}}}}


def _body(required, **fields):
    return {"content": {"application/json": {"schema": {"type": "object", "required": required,
                                                        "properties": fields}}}}


MEMBER = {"type": "object", "properties": {"handle": {"type": "string"}, "email": {"type": "string"}}}
HANDLE = [{"name": "handle", "in": "path", "required": True, "schema": {"type": "string"}}]
STRING, EMAIL = {"type": "string"}, {"type": "string", "format": "email"}

CLUB = {
    "openapi": "3.0.3", "info": {"title": "Club"},
    "paths": {
        "/members": {"post": {"operationId": "addMember", "summary": "Add a member",
                              "requestBody": _body(["email"], email=EMAIL, first_name=STRING, last_name=STRING),
                              "responses": _answer(MEMBER)}},
        "/members/{handle}": {
            "get": {"operationId": "getMember", "summary": "Show a member", "parameters": HANDLE,
                    "responses": _answer(MEMBER)},
            "patch": {"operationId": "renameMember", "summary": "Change a member's display name",
                      "parameters": HANDLE, "requestBody": _body(["display_name"], display_name=STRING),
                      "responses": _answer(MEMBER)},
            "delete": {"operationId": "removeMember", "summary": "Remove a member", "parameters": HANDLE,
                       "responses": {"204": {"description": "gone"}}}},
        "/members/{handle}/badges/{badge_number}": {"get": {
            "operationId": "getBadge", "summary": "One badge of a member",
            "parameters": HANDLE + [{"name": "badge_number", "in": "path", "required": True,
                                     "schema": {"type": "integer"}}],
            "responses": _answer({"type": "object", "properties": {"title": STRING}})}},
        "/members/{handle}/checks": {"post": {
            "operationId": "checkCode", "summary": "Check a code a member was sent", "parameters": HANDLE,
            "requestBody": _body(["code"], code=STRING), "responses": _answer({"type": "object"})}},
    },
}


@pytest.fixture
def club(tmp_path):
    with imported_pack(tmp_path, "club", CLUB) as pack:
        yield pack


@contextmanager
def _club_with(tmp_path, path: str, method: str, operation_id: str, summary: str, body: dict):
    """The club's pack with one more operation (a member's, taking `body`), imported and loaded."""
    spec = json.loads(json.dumps(CLUB))
    spec["paths"][path] = {method: {"operationId": operation_id, "summary": summary, "parameters": HANDLE,
                                    "requestBody": body, "responses": _answer({"type": "object"})}}
    written = tmp_path / "club.json"
    written.write_text(json.dumps(spec), encoding="utf-8")
    import_openapi(written, tmp_path / "packs")
    with using_packs_root(tmp_path / "packs"):
        yield load_pack("club")


def _offered(pack, words: str, goals: list[str]) -> dict[str, list[str]]:
    from pipeline.llm.grammar import identified_in_paths, value_candidates

    in_play = {a for g in goals for a in pack.spec.apis[pack.spec.goals[g].api].arguments}
    return value_candidates(pack, words, date(2026, 5, 4), arguments=in_play,
                            named_by=identified_in_paths(pack, goals))


def test_a_path_identifier_is_named_by_its_resources_word_and_read_as_written(club):
    # handle's own name does not say "member"; its path does. A word like no English word is read after it.
    offered = _offered(club, "remove the member ann-7 please", ["remove_member"])
    assert offered["handle"] == ["ann-7"]
    assert "ann-7" not in _offered(club, "remove ann-7 please", ["remove_member"]).get("handle", [])
    # a code written in digits right after its name is a value of it
    assert "730215" in _offered(club, "check code 730215 for member ann-7", ["check_code"])["code"]


def test_an_email_is_kept_whatever_the_slot_head_thinks_and_more_of_a_name_said_wins(club):
    offered = _offered(club, "add jo@example.org to the club, last name Ruiz", ["add_member"])
    assert offered["email"] == ["jo@example.org"]
    assert offered.get("last_name") and not offered.get("first_name")


def test_a_whole_name_gives_each_argument_named_after_a_part_of_one_that_part(club):
    """first_name and last_name are a person's names by their own names: "Maria Lopez" gives each its part,
    neither the whole; a lone name labelled as a part is that part only."""
    assert {club.spec.arguments[a].normalizer for a in ("first_name", "last_name")} == {"person_name"}
    offered = _offered(club, "add Maria Lopez to the club, maria@example.org", ["add_member"])
    assert (offered.get("first_name"), offered.get("last_name")) == (["Maria"], ["Lopez"])
    labelled = _offered(club, "add maria@example.org to the club, last name Ruiz", ["add_member"])
    assert labelled.get("last_name") == ["Ruiz"] and not labelled.get("first_name")


def test_a_phone_number_with_its_country_code_is_read_whole_and_kept(tmp_path):
    body = _body(["phone"], phone={"type": "string", "description": "The member's phone number"})
    with _club_with(tmp_path, "/members/{handle}/phone", "put", "setPhone", "Set a member's phone", body) as pack:
        assert pack.spec.arguments["phone"].normalizer == "phone"
        offered = _offered(pack, "set the phone of member ann-7 to +372 5551 2345", ["set_phone"])
        assert "+37255512345" in offered["phone"]  # the slot head, which learned SGD's numbers, would drop it


def test_the_words_a_thing_is_renamed_to_are_its_new_name(club):
    from pipeline.run import run_pipeline

    run = run_pipeline("rename member ann-7 to Blue Jay", "club")
    assert run.plan is not None, run.failure
    assert [(c.api, c.args["handle"].value, c.args["display_name"].value) for c in run.plan.calls] == \
        [("rename_member", "ann-7", "Blue Jay")], run.ir


def test_a_count_of_parts_no_call_lists_is_read_from_the_thing_that_holds_them(club):
    from pipeline.retrieval.retrievers import ScoredGoal, get_retriever

    retriever = get_retriever(club)
    asked = ScoredGoal("get_badge", 0.5, "how many badges does member ann-7 have?")
    assert retriever._the_count_of_parts(asked).goal == "get_member"
    # a question that counts nothing, or counts what the thing is not made of, stands
    for words in ("show badge 2 of member ann-7", "how many members are there?"):
        assert retriever._the_count_of_parts(ScoredGoal("get_badge", 0.5, words)).goal == "get_badge"


def test_a_clause_that_points_back_with_a_verb_of_its_own_asks_that_kind_of_call(club):
    from pipeline.retrieval.retrievers import get_retriever

    # the story names the member and a change made to it; the clause that points back says what to do now
    retriever = get_retriever(club)
    assert [g.goal for g in retriever.by_clause("member ann-7 got a new display name, show it")] == ["get_member"]
    assert [g.goal for g in retriever.by_clause("member ann-7 was set up by mistake, remove it")] == ["remove_member"]


def test_a_name_in_a_goals_own_words_is_that_goals_name(tmp_path):
    """Two calls of a request each take a name ("a team called Night Owls and a badge named early_bird"): a
    name said in one call's own words is read for that call's arguments, not for another's of the same kind."""
    from pipeline.llm.grammar import ir_grammar

    spec = {"openapi": "3.0.3", "info": {"title": "Guild"}, "paths": {
        "/teams": {"post": {"operationId": "createTeam", "summary": "Create a team",
                            "requestBody": _body(["display_name"], display_name=STRING),
                            "responses": _answer({"type": "object", "properties": {"id": STRING}})}},
        "/teams/{team_id}/badges": {"post": {
            "operationId": "createBadge", "summary": "Create a badge of a team",
            "parameters": [{"name": "team_id", "in": "path", "required": True, "schema": STRING}],
            "requestBody": _body(["unique_name"], unique_name=STRING, friendly_name=STRING),
            "responses": _answer({"type": "object", "properties": {"id": STRING}})}}}}
    path = tmp_path / "guild.json"
    path.write_text(json.dumps(spec), encoding="utf-8")
    import_openapi(path, tmp_path / "packs")
    with using_packs_root(tmp_path / "packs"):
        pack = load_pack("guild")
        first, second = "set up a team called Night Owls", "add a badge named early_bird to it"
        grammar = ir_grammar(pack, f"{first} and {second}", date(2026, 5, 4), ["create_team", "create_badge"],
                             fixed=True, sources=[first, second], contexts=["", ""])
        offered = {line.split(" ::= ")[0]: line.split(" ::= ")[1] for line in grammar.splitlines() if " ::= " in line}
        assert "Night Owls" in offered["v_display_name_1"]
        assert not any("Night Owls" in body for name, body in offered.items() if name.endswith("_2"))
        assert "early_bird" in offered["v_unique_name_2"]


def test_a_date_time_is_read_as_a_day_and_its_time_and_sent_in_rfc_3339(tmp_path):
    """A `date-time` field takes the moment the words name, resolved against today: never the raw words, a
    time is a time only where its words say so, and a day its words put behind today stays behind."""
    from pipeline.run import run_pipeline

    moment = {"type": "string", "format": "date-time"}
    with _club_with(tmp_path, "/members/{handle}/sessions", "post", "bookSession", "Book a training session for a "
                    "member", _body(["starts_at"], starts_at=moment, ends_at=moment)) as pack:
        assert pack.spec.arguments["starts_at"].normalizer == "date_time"
        offered = _offered(pack, "book member ann-7 a session on June 12 at 4:30 pm", ["book_session"])
        assert offered["starts_at"] == ["June 12 at 4:30 pm", "2026-06-12T16:30:00Z"]  # the words and what they read as
        # two moments for a call that takes two: in the order the schema lists them
        offered = _offered(pack, "book member ann-7 a session starting June 12 at 4 pm and ending June 12 at 6 pm",
                           ["book_session"])
        assert (offered["starts_at"], offered["ends_at"]) == (["June 12 at 4 pm", "2026-06-12T16:00:00Z"],
                                                             ["June 12 at 6 pm", "2026-06-12T18:00:00Z"])
        run = run_pipeline("book a session for member ann-7 tomorrow at 9am", "club", today="2026-05-04")
        assert run.plan is not None, run.failure
        assert [(c.api, c.args["starts_at"].value) for c in run.plan.calls] == [("book_session", "2026-05-05T09:00:00Z")], run.ir


def test_a_range_of_days_goes_to_the_pair_in_the_order_the_call_lists_them(tmp_path):
    """Two days for a call that takes a start and an end day: the first written is the start, though the
    learned parts, reading each alone, find the first unlikely as a start."""
    spec = json.loads(json.dumps(CLUB))
    day = {"type": "string", "format": "date"}
    spec["paths"]["/members/{handle}/visits"] = {"get": {
        "operationId": "listVisits", "summary": "List a member's visits to the club", "parameters": HANDLE + [
            {"name": name, "in": "query", "schema": day} for name in ("start_date", "end_date")],
        "responses": _answer({"type": "array", "items": {"type": "object", "properties": {"day": day}}})}}
    path = tmp_path / "club.json"
    path.write_text(json.dumps(spec), encoding="utf-8")
    import_openapi(path, tmp_path / "packs")
    with using_packs_root(tmp_path / "packs"):
        pack = load_pack("club")
        for words in ("visits of member ann-7 between March 3 and March 19",
                      "which visits did member ann-7 make from March 3 to March 19"):
            offered = _offered(pack, words, ["list_visits"])
            assert (offered["start_date"][:1], offered["end_date"][:1]) == (["March 3"], ["March 19"]), offered


def test_words_in_lower_case_before_their_arguments_own_noun_are_its_value_without_it(tmp_path):
    spec = {"openapi": "3.0.3", "info": {"title": "Guild"}, "paths": {"/clubs": {"post": {
        "operationId": "createClub", "summary": "Create a club",
        "requestBody": _body(["club_name"], club_name=STRING), "responses": _answer(MEMBER)}}}}
    path = tmp_path / "guild.json"
    path.write_text(json.dumps(spec), encoding="utf-8")
    import_openapi(path, tmp_path / "packs")
    with using_packs_root(tmp_path / "packs"):
        offered = _offered(load_pack("guild"), "add a chess club please", ["create_club"])
    # the club's noun follows its name: the words before it are a reading of their own, kept whatever the
    # slot head thinks of them (it drops the span with the noun)
    assert "chess" in offered.get("club_name", []), offered


def test_a_web_address_is_read_whole_and_its_words_are_nobody_elses(tmp_path):
    """A field of web addresses (by its name here) takes the address as written, its marks and all, and the
    words inside it are no other argument's value; where the words give none, it is asked for, never
    filled from a name."""
    from pipeline.run import run_pipeline

    with _club_with(tmp_path, "/members/{handle}/pictures", "post", "addPicture", "Add a picture of a member",
                    _body(["picture_url"], picture_url=STRING, caption=STRING)) as pack:
        assert pack.spec.arguments["picture_url"].normalizer == "url"
        address = "https://pics.example.org/club/ann-7.jpg?size=large&crop=face"
        offered = _offered(pack, f"add a picture of member ann-7: {address}. Thanks!", ["add_picture"])
        assert offered["picture_url"] == [address]  # whole: the words are what they read as
        assert not any("pics" in v or "large" in v for v in offered.get("caption", []))
        run = run_pipeline(f"add a picture of member ann-7: {address}", "club")
        assert run.plan is not None, run.failure
        assert [(c.api, c.args["picture_url"].value) for c in run.plan.calls] == [("add_picture", address)], run.ir
        run = run_pipeline("add a picture of member Ann Lee", "club")
        assert run.plan is not None, run.failure
        assert [c.args["picture_url"].get_info for c in run.plan.calls] == ["picture_url"], run.ir


def test_a_value_after_a_change_verb_naming_its_field_is_that_fields_new_value(tmp_path):
    """"lower the monthly fee of member ann-7 to 25 dollars": the clause opens with a verb of a change and
    names the fee before "to", so the amount after it is the fee's, kept whatever the slot head thinks."""
    with _club_with(tmp_path, "/members/{handle}/fee", "patch", "setFee", "Set a member's monthly fee",
                    _body(["monthly_fee"], monthly_fee={"type": "number"})) as pack:
        offered = _offered(pack, "lower the monthly fee of member ann-7 to 25 dollars", ["set_fee"])
        assert "25.00" in offered["monthly_fee"] and offered["handle"] == ["ann-7"]


def test_a_name_written_in_quotes_is_one_value_bounded_by_its_quotes(tmp_path):
    """The quotes say where a name begins and ends: 'a talk titled "Rust for Embedded Folks"' is one title,
    not "Rust" with the rest a description."""
    body = _body(["title"], title={"type": "string", "description": "title of this talk"},
                 description={"type": "string"})
    with _club_with(tmp_path, "/members/{handle}/talks", "post", "addTalk", "Add a talk of a member", body) as pack:
        offered = _offered(pack, 'add a talk titled "Rust for Embedded Folks" for member ann-7', ["add_talk"])
        assert offered["title"] == ["Rust for Embedded Folks"]
        assert "Embedded Folks" not in offered.get("description", [])


HOTEL = {
    "openapi": "3.0.3", "info": {"title": "Hotel"},
    "paths": {
        "/reservations/{confirmation_number}": {"get": {
            "operationId": "getReservation", "summary": "Show a reservation",
            "parameters": [{"name": "confirmation_number", "in": "path", "required": True, "schema": STRING}],
            "responses": _answer({"type": "object", "properties": {"confirmation_number": STRING}})}},
        "/check-in": {"post": {"operationId": "checkInGuest", "summary": "Check a guest in",
                               "requestBody": _body(["confirmation_number"], confirmation_number=STRING,
                                                    notes=STRING),
                               "responses": _answer({"type": "object"})}},
        "/zones/nearby": {"get": {"operationId": "zonesNearby", "summary": "Zones near a point", "parameters": [
            {"name": "lat", "in": "query", "required": True, "schema": {"type": "number"}},
            {"name": "lon", "in": "query", "required": True, "schema": {"type": "number"}}],
            "responses": _answer({"type": "object"})}},
        "/payments": {"post": {"operationId": "recordPayment", "summary": "Record a payment",
                               "requestBody": _body(["amount"], amount={"type": "number"}),
                               "responses": _answer({"type": "object"})}},
    },
}


@pytest.fixture
def hotel(tmp_path):
    path = tmp_path / "hotel.json"
    path.write_text(json.dumps(HOTEL), encoding="utf-8")
    import_openapi(path, tmp_path / "packs")
    with using_packs_root(tmp_path / "packs"):
        yield load_pack("hotel")


def test_a_code_written_for_what_a_path_finds_one_thing_by_is_read_wherever_it_is_sent(hotel):
    """`/reservations/{confirmation_number}` finds a reservation by its confirmation number: a word of letters
    and digits the request writes is that number, in the body of another call too, whatever the slot head
    (which learned no such codes) finds of it; words that write no code give none."""
    assert hotel.spec.arguments["confirmation_number"].normalizer == "title_text"
    offered = _offered(hotel, "checking in the party on CNF-2026-003190 now", ["check_in_guest"])
    assert offered["confirmation_number"] == ["CNF-2026-003190"]
    assert not _offered(hotel, "checking in the party from Lisbon now", ["check_in_guest"]).get("confirmation_number")


def test_a_number_that_is_no_money_is_kept_as_written_and_money_rounds_to_cents(hotel):
    assert (hotel.spec.arguments["lat"].normalizer, hotel.spec.arguments["amount"].normalizer) == ("decimal", "amount")
    offered = _offered(hotel, "which zones are near lat 45.4702 lon -73.98561?", ["zones_nearby"])
    assert offered["lat"] == ["45.4702"] and offered["lon"] == ["-73.98561"]
    from pipeline.values.normalizers import NORMALIZERS

    assert (NORMALIZERS["decimal"]("-73.98561"), NORMALIZERS["amount"]("-73.98561")) == ("-73.98561", "73.99")


def test_a_field_written_as_its_label_and_a_colon_is_read_to_the_next_comma_and_ends_the_name_before(tmp_path):
    body = _body(["name"], name={"type": "string", "description": "the program's name"},
                 description={"type": "string"}, password={"type": "string"})
    with _club_with(tmp_path, "/members/{handle}/programs", "post", "addProgram", "Add a program for a member",
                    body) as pack:
        offered = _offered(pack, "for member ann-7 add a program called Summer Shred - description: eight weeks "
                                 "of circuits", ["add_program"])
        assert offered["name"] == ["Summer Shred"]
        assert [v.lower() for v in offered["description"]] == ["eight weeks of circuits"]
        # a secret after its name is read whole, its marks too
        offered = _offered(pack, "for member ann-7 add a program called Summer Shred, password Kestrel!77",
                           ["add_program"])
        assert offered["password"] == ["Kestrel!77"]


REFUNDS = {
    "openapi": "3.0.3", "info": {"title": "Refunds"},
    "paths": {
        "/payments/{payment_id}/refund": {"post": {
            "operationId": "refundPayment", "summary": "Refund a payment",
            "parameters": [{"name": "payment_id", "in": "path", "required": True, "schema": STRING}],
            "requestBody": _body(["amount"], amount={"type": "integer", "description": "the amount in cents"},
                                 reason=STRING),
            "responses": _answer({"type": "object"})}},
    },
}


def test_money_in_an_integer_field_is_an_amount_and_a_number_with_decimals_is_no_identifier(tmp_path):
    """A price in cents is money: "2500 EUR" is its value (an integer reader counts no money), read whatever
    the slot head makes of it, as written with a currency; "20.00" is no payment's id, "pay_44d1e8" is."""
    path = tmp_path / "refunds.json"
    path.write_text(json.dumps(REFUNDS), encoding="utf-8")
    import_openapi(path, tmp_path / "packs")
    with using_packs_root(tmp_path / "packs"):
        pack = load_pack("refunds")
        assert pack.spec.arguments["amount"].normalizer == "amount"
        offered = _offered(pack, "refund 2500 EUR on payment pay_44d1e8", ["refund_payment"])
        assert "2500.00" in offered["amount"] and offered["payment_id"] == ["pay_44d1e8"]
        offered = _offered(pack, "refund 20.00 of payment pay_44d1e8", ["refund_payment"])
        assert offered.get("payment_id") == ["pay_44d1e8"]
