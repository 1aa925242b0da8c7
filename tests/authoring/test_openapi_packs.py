"""import-openapi on small specs written here: naming, types, bodies, dataflow, overlays, and bad specs
refused by name with nothing written. (The shared real specs are measured by `nesyplan eval-openapi`.)"""

import json
from datetime import date

import pytest
import yaml
from typer.testing import CliRunner

from nesyplan.cli import app
from pipeline.authoring.openapi_packs import dataflow_edges, import_openapi
from pipeline.packs.openapi_spec import OpenApiError, read_document
from pipeline.packs.pack import load_pack, using_packs_root
from pipeline.sessions.executors import HttpExecutor

GARAGE = {
    "openapi": "3.1.0",
    "info": {"title": "Garage service", "description": "Book car repairs at a garage."},
    "servers": [{"url": "/api"}],
    "components": {
        "securitySchemes": {"key": {"type": "apiKey", "in": "header", "name": "X-Garage-Key"}},
        "schemas": {
            "Car": {"type": "object", "required": ["plate"], "properties": {
                "id": {"type": "integer", "readOnly": True},
                "plate": {"type": "string", "description": "licence plate"},
                "name": {"type": "string", "description": "the owner's nickname for the car"},
                "fuel": {"type": "string", "enum": ["petrol", "diesel", "electric"]},
                "owner": {"type": "object", "properties": {"email": {"type": "string", "format": "email"}}}}},
            "CarCreated": {"type": "object", "properties": {"id": {"type": "integer"}, "plate": {"type": "string"}}},
            "Repair": {"type": "object", "properties": {"repairId": {"type": "string"}, "status": {"type": "string"}}},
        }},
    "security": [{"key": []}],
    "paths": {
        "/cars": {"post": {
            "operationId": "registerCar", "summary": "Register a car",
            "requestBody": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/Car"}}}},
            "responses": {"201": {"description": "made", "content": {"application/json": {
                "schema": {"allOf": [{"$ref": "#/components/schemas/CarCreated"}]}}}}}},
            "get": {"summary": "Find cars by their name",
                    "parameters": [{"name": "name", "in": "query", "schema": {"type": "string"}}],
                    "responses": {"200": {"description": "ok", "content": {"application/json": {"schema": {
                        "type": "array", "items": {"$ref": "#/components/schemas/CarCreated"}}}}}}}},
        "/cars/{carId}/repairs": {"post": {
            "operationId": "bookRepair", "summary": "Book a repair for a car on a day",
            "parameters": [{"name": "carId", "in": "path", "required": True, "schema": {"type": "integer"}},
                           {"name": "X-Garage-Key", "in": "header", "schema": {"type": "string"}}],
            "requestBody": {"required": True, "content": {"application/json": {"schema": {
                "type": "object", "required": ["day", "express"], "properties": {
                    "day": {"type": "string", "format": "date", "description": "the day to bring the car"},
                    "express": {"type": "boolean"},
                    "notes": {"type": "array", "items": {"type": "string"}}}}}}},
            "responses": {"200": {"description": "ok", "content": {"application/json": {
                "schema": {"$ref": "#/components/schemas/Repair"}}}}}}},
        "/repairs/{repairId}": {"get": {
            "operationId": "getRepair", "summary": "Show a repair's status",
            "parameters": [{"name": "repairId", "in": "path", "required": True, "schema": {"type": "string"}}],
            "responses": {"200": {"description": "ok"}}}},
    },
}


def write(tmp_path, doc, name="spec.json"):
    path = tmp_path / name
    path.write_text(json.dumps(doc) if name.endswith(".json") else yaml.safe_dump(doc), encoding="utf-8")
    return path


@pytest.fixture
def garage(tmp_path):
    root = tmp_path / "packs"
    path, spec, document, _ = import_openapi(write(tmp_path, GARAGE), root, name="garage",
                                             base_url="http://127.0.0.1:9")
    with using_packs_root(root):
        yield load_pack("garage"), spec, root


def test_operations_become_goals_and_apis_named_by_the_rules(garage):
    pack, _, _ = garage
    assert list(pack.spec.apis) == ["get_cars", "register_car", "book_repair", "get_repair"]
    assert pack.spec.goals["book_repair"].description == "Book a repair for a car on a day"
    assert pack.spec.apis["register_car"].effects and not pack.spec.apis["get_cars"].effects


def test_arguments_carry_their_types_and_where_they_go(garage):
    pack, _, _ = garage
    args, book = pack.spec.arguments, pack.spec.apis["book_repair"]
    assert args["fuel"].normalizer == "choice" and args["fuel"].values == ["petrol", "diesel", "electric"]
    assert args["owner_email"].normalizer == "email"                      # a nested property: its path
    assert args["day"].normalizer == "future_date" and args["express"].values == ["true", "false"]
    assert "car_id" not in pack.spec.apis["register_car"].arguments      # readOnly: the server's
    assert book.arguments == ["car_id", "day", "express", "notes"] and book.optional == {"notes": None}
    assert "x_garage_key" not in args                                    # credentials are no argument
    assert book.http.path == "/cars/{car_id}/repairs"
    assert book.http.types == {"day": "date", "express": "boolean", "notes": "array"}
    assert pack.spec.apis["register_car"].http.body["owner.email"] == "owner_email"
    # the car's own name and the search's name are apart; a body without `required` is taken as sent
    assert "car_name" in pack.spec.apis["register_car"].arguments and "name" in pack.spec.apis["get_cars"].arguments
    assert "plate" not in pack.spec.apis["register_car"].optional


def test_identifiers_flow_from_the_call_that_returns_them(garage):
    pack, spec, _ = garage
    assert set(pack.spec.arguments["car_id"].accepts_output) == {"register_car_result", "get_cars_result"}
    assert pack.spec.arguments["repair_id"].accepts_output == ["book_repair_result"]
    assert ("book_repair", "get_repair", "repair_id") in dataflow_edges(spec)
    assert pack.spec.apis["book_repair"].http.output == "repairId"  # the answer's own field name


def test_base_url_and_credentials_come_from_the_spec_not_the_pack(garage):
    pack, _, root = garage
    assert pack.spec.http_base_url == "http://127.0.0.1:9/api"          # the relative server joined
    assert pack.spec.http_auth.scheme == "header" and pack.spec.http_auth.name == "X-Garage-Key"
    assert pack.spec.http_auth.env == "NESYPLAN_GARAGE_TOKEN"
    assert "secret" not in (root / "domains" / "garage" / "pack.yaml").read_text()


def test_the_request_is_built_from_the_binding(garage, monkeypatch):
    pack, _, _ = garage
    sent = {}

    class Recorder(HttpExecutor):
        def _send(self, api, request, auth):
            sent.update(request)
            import httpx
            return httpx.Response(200, json={"repairId": "r-7", "status": "booked"})

    monkeypatch.setenv("NESYPLAN_GARAGE_TOKEN", "s3cret")
    output = Recorder(pack, "s1").call("book_repair", {"car_id": "12", "day": "03/14/2025", "express": "yes",
                                                       "notes": "brakes, lights"})
    assert output == "r-7"
    assert sent["url"] == "http://127.0.0.1:9/api/cars/12/repairs" and sent["method"] == "POST"
    assert sent["json"] == {"day": "2025-03-14", "express": "yes", "notes": ["brakes", "lights"]}
    assert sent["headers"]["X-Garage-Key"] == "s3cret"
    Recorder(pack, "s1").call("book_repair", {"car_id": "3", "day": "03/15/2025", "express": "true"})
    assert sent["json"] == {"day": "2025-03-15", "express": True}        # an optional value not given: left out
    from pipeline.sessions.executors import ExecutionError
    with pytest.raises(ExecutionError, match="which its path needs"):
        Recorder(pack, "s1").call("book_repair", {"day": "03/15/2025", "express": "true"})


def test_an_overlay_survives_a_re_import_and_can_leave_operations_out(tmp_path):
    root = tmp_path / "packs"
    spec_path = write(tmp_path, GARAGE, "garage.yaml")
    import_openapi(spec_path, root)
    overlay = root / "domains" / "garage" / "overlay.yaml"
    overlay.write_text(yaml.safe_dump({"leave_out": ["getRepair"], "out_of_scope": ["sell my car"],
                                       "goals": {"book_repair": {"examples": ["fix my brakes on Monday"]}}}))
    import_openapi(spec_path, root)
    with using_packs_root(root):
        pack = load_pack("garage")
    assert "get_repair" not in pack.spec.apis and pack.spec.out_of_scope == ["sell my car"]
    assert pack.spec.goals["book_repair"].examples == ["fix my brakes on Monday"]
    overlay.write_text(yaml.safe_dump({"leave_out": ["getRepairs"]}))
    with pytest.raises(OpenApiError, match="leave_out: no operation 'getRepairs'.*getRepair"):
        import_openapi(spec_path, root)


# Reads go with an API key, writes with an OAuth token; an upload is multipart; a body repeats its path's id;
# a field takes a list of days; one declares a path parameter its path has no place for; web addresses.
KENNEL = {
    "openapi": "3.0.3", "info": {"title": "Kennel"},
    "components": {"securitySchemes": {
        "key": {"type": "apiKey", "in": "header", "name": "X-Key"},
        "oauth": {"type": "oauth2", "flows": {"implicit": {"authorizationUrl": "https://auth.example/a", "scopes": {}}}}},
        "schemas": {"Dog": {"type": "object", "required": ["id", "name"], "properties": {
            "id": {"type": "integer"}, "name": {"type": "string"},
            "photoUrls": {"type": "array", "items": {"type": "string"}},
            "homepage": {"type": "string", "example": "https://dogs.example.org/rex"},
            "walkDays": {"type": "array", "items": {"type": "string", "format": "date"}},
            "chip": {"type": "string", "pattern": "^[0-9]*$"}}}}},
    "security": [{"key": []}],
    "paths": {
        "/dogs/{dogId}": {
            "get": {"operationId": "getDog", "parameters": [
                {"name": "dogId", "in": "path", "required": True, "schema": {"type": "integer"}}],
                "responses": {"200": {"description": "ok"}}},
            "put": {"operationId": "renameDog", "security": [{"oauth": []}], "parameters": [
                {"name": "dogId", "in": "path", "required": True, "schema": {"type": "integer"}}],
                "requestBody": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/Dog"}}}},
                "responses": {"200": {"description": "ok"}}}},
        "/dogs/{dogId}/photo": {"post": {
            "operationId": "uploadPhoto", "security": [{"oauth": []}, {"key": []}], "parameters": [
                {"name": "dogId", "in": "path", "required": True, "schema": {"type": "integer"}}],
            "requestBody": {"content": {"multipart/form-data": {"schema": {"type": "object", "properties": {
                "caption": {"type": "string"}}}}}},
            "responses": {"200": {"description": "ok"}}}},
        "/walks": {"post": {
            "operationId": "startWalk", "parameters": [
                {"name": "walkerId", "in": "path", "required": True, "schema": {"type": "string"}}],
            "responses": {"200": {"description": "ok"}}}},
    },
}


def test_each_operation_is_sent_as_its_own_security_and_body_say(tmp_path, monkeypatch):
    root = tmp_path / "packs"
    _, written, document, _ = import_openapi(write(tmp_path, KENNEL), root, name="kennel", base_url="http://127.0.0.1:9")
    with using_packs_root(root):
        pack = load_pack("kennel")
    apis = pack.spec.apis
    # the document's scheme by default; its own where an operation asks only for another, or for it first
    assert pack.spec.http_auth.name == "X-Key" and apis["get_dog"].http.auth == ""
    assert apis["rename_dog"].http.auth == "oauth" and pack.spec.http_auths["oauth"].scheme == "bearer"
    assert apis["upload_photo"].http.auth == ""  # the API key is one of its choices: the document's own
    assert pack.spec.http_auths["oauth"].env == "NESYPLAN_KENNEL_OAUTH_TOKEN"
    assert apis["rename_dog"].http.body["id"] == "dog_id" and apis["rename_dog"].http.path == "/dogs/{dog_id}"
    assert apis["rename_dog"].http.types["walk_days"] == "dates"
    assert [pack.spec.arguments[a].normalizer for a in ("photo_urls", "homepage")] == ["url", "url"]
    assert pack.spec.arguments["walk_days"].normalizer in ("date", "future_date")  # each a day, sent as ISO 8601
    assert pack.spec.arguments["chip"].normalizer == "digits"  # a pattern of digits alone
    assert apis["upload_photo"].http.multipart and apis["upload_photo"].http.form
    start = next(op for op in document.operations if op.key == "startWalk")
    assert "walker_id" not in apis["start_walk"].arguments and "walkerId" in " ".join(start.left_out)

    sent = []

    class Recorder(HttpExecutor):
        def _send(self, api, request, auth):
            sent.append(request)
            import httpx
            return httpx.Response(200, json={})

    monkeypatch.setenv("NESYPLAN_KENNEL_TOKEN", "the-key")
    monkeypatch.setenv("NESYPLAN_KENNEL_OAUTH_TOKEN", "the-token")
    executor = Recorder(pack, "s1")
    executor.call("get_dog", {"dog_id": "4"})
    executor.call("rename_dog", {"dog_id": "4", "name": "Rex", "walk_days": "06/01/2026, 06/03/2026", "chip": "985-112 004"})
    executor.call("upload_photo", {"dog_id": "4", "caption": "asleep"})
    executor.call("start_walk", {})
    read, rename, upload, walk = sent
    assert read["headers"]["X-Key"] == "the-key" and "Authorization" not in read["headers"] and "json" not in read
    assert rename["headers"]["Authorization"] == "Bearer the-token" and "X-Key" not in rename["headers"]
    assert rename["json"]["id"] == 4 and rename["json"]["walkDays"] == ["2026-06-01", "2026-06-03"]
    assert rename["json"]["chip"] == "985112004"  # as its pattern takes it: digits alone
    assert upload["files"] == {"caption": (None, "asleep")} and "data" not in upload
    assert not {"json", "data", "files"} & set(walk)  # an operation that takes no body is sent none


def test_swagger_2_bodies_and_forms_are_read():
    doc = read_document({
        "swagger": "2.0", "host": "api.example.com", "basePath": "/v1", "schemes": ["https"],
        "definitions": {"Note": {"properties": {"text": {"type": "string"}}, "required": ["text"]}},
        "paths": {"/notes": {"post": {"operationId": "addNote", "parameters": [
            {"in": "body", "name": "body", "required": True, "schema": {"$ref": "#/definitions/Note"}}],
            "responses": {"200": {"description": "ok", "schema": {"$ref": "#/definitions/Note"}}}}},
            "/login": {"post": {"operationId": "login", "parameters": [
                {"in": "formData", "name": "user", "type": "string", "required": True},
                {"in": "formData", "name": "remember", "type": "bool"}],
                "responses": {"204": {"description": "ok"}}}}}})
    note, login = doc.operations
    assert doc.base_url == "https://api.example.com/v1"
    assert [(f.wire, f.location, f.required) for f in note.fields] == [("text", "body", True)]
    assert login.encoding == "form" and [(f.wire, f.kind) for f in login.fields] == [("user", "string"),
                                                                                  ("remember", "boolean")]


def test_an_operation_with_a_dangling_ref_is_left_out_by_name(tmp_path):
    doc = json.loads(json.dumps(GARAGE))
    doc["paths"]["/repairs/{repairId}"]["get"]["responses"]["200"] = {"description": "ok", "content": {
        "application/json": {"schema": {"$ref": "#/components/schemas/Nowhere"}}}}
    doc["paths"]["/cars"]["post"]["requestBody"]["content"]["application/json"]["schema"] = {
        "$ref": "#/components/schemas/Missing"}
    document = read_document(doc)
    assert [op.key for op in document.operations] == ["GET /cars", "bookRepair", "getRepair"]
    assert document.left_out == ["registerCar: $ref '#/components/schemas/Missing' cannot be resolved"]
    assert any("Nowhere" in why for why in document.operations[2].left_out)  # an unreadable answer: no output



def test_a_path_place_the_document_does_not_declare_is_still_an_argument(tmp_path):
    """`PUT /notes/{id}` with only a body declared: the id is still what the path is sent with, and the
    pack validates (it had been refused whole: its binding named an argument it did not have)."""
    doc = {"swagger": "2.0", "paths": {"/notes/{id}": {
        "get": {"operationId": "getNote", "parameters": [{"in": "path", "name": "id", "required": True,
                                                          "type": "integer"}],
                "responses": {"200": {"description": "ok"}}},
        "put": {"operationId": "updateNote", "parameters": [
            {"in": "body", "name": "note", "required": True,
             "schema": {"properties": {"text": {"type": "string"}}, "required": ["text"]}}],
                "responses": {"200": {"description": "ok"}}}}}}
    update = read_document(doc).operations[1]
    assert [(f.wire, f.location, f.required) for f in update.fields] == [("id", "path", True), ("text", "body", True)]
    (tmp_path / "notes.json").write_text(json.dumps(doc))
    pack_file = import_openapi(tmp_path / "notes.json", tmp_path / "packs", "notes")[0]
    with using_packs_root(tmp_path / "packs"):
        pack = load_pack("notes")
    assert pack_file.is_file() and pack.spec.apis["update_note"].http.path == "/notes/{note_id}"


def test_an_answer_schema_of_the_wrong_shape_leaves_the_call_usable():
    doc = json.loads(json.dumps(GARAGE))
    doc["paths"]["/repairs/{repairId}"]["get"]["responses"]["200"] = {"description": "ok", "content": {
        "application/json": {"schema": {"type": "object", "required": "id", "allOf": {"x": 1}, "properties": {
            "parts": {"type": "array", "items": [{"type": "object"}]}, "owner": {"type": "object", "properties": "x"},
            "kind": {"oneOf": {"type": "string"}}}}}}}
    operation = next(op for op in read_document(doc).operations if op.key == "getRepair")
    assert operation.answer_fields == ["parts", "owner", "kind"] and operation.held_ids == {}


@pytest.mark.parametrize("doc, message", [
    ({"openapi": "2.5", "paths": {}}, "not OpenAPI 3.0/3.1 or Swagger 2.0"),
    ({"openapi": "3.0.0", "info": {}}, "no `paths`"),
    ({"openapi": "3.0.0", "paths": {"/a": {"get": {"operationId": "a", "parameters": [
        {"$ref": "https://example.com/p.json#/x"}]}}}}, "no operation could be read: a:"),
    ({"openapi": "3.0.0", "paths": {"/a": {"post": {"operationId": "upload", "requestBody": {
        "required": True, "content": {"application/octet-stream": {}}}}}}},
     "upload: its request body is only application/octet-stream"),
    ({"openapi": "3.0.0", "components": {"schemas": {"Node": {"type": "object", "required": ["next"], "properties": {
        "next": {"$ref": "#/components/schemas/Node"}}}}}, "paths": {"/n": {"post": {
            "operationId": "addNode", "requestBody": {"content": {"application/json": {
                "schema": {"$ref": "#/components/schemas/Node"}}}}}}}},
     "addNode: required body field 'next' is an object that contains itself"),
])
def test_a_bad_spec_is_refused_by_name_and_nothing_is_written(tmp_path, doc, message):
    root = tmp_path / "packs"
    with pytest.raises(OpenApiError, match=message.replace("(", r"\(").replace(")", r"\)")):
        import_openapi(write(tmp_path, doc), root, name="bad")
    assert not root.exists() or not any(root.rglob("pack.yaml"))


def test_the_command_reports_what_it_found_and_left_out(tmp_path):
    doc = json.loads(json.dumps(GARAGE))
    doc["paths"]["/cars"]["post"]["requestBody"]["content"]["application/json"]["schema"] = {
        "$ref": "#/components/schemas/Missing"}
    result = CliRunner().invoke(app, ["import-openapi", str(write(tmp_path, doc)), "--name", "garage",
                                      "--out", str(tmp_path / "packs"), "--json"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["operations"] == 3 and summary["dataflow_edges"] >= 1
    assert summary["left_out"] == ["registerCar: $ref '#/components/schemas/Missing' cannot be resolved"]
    bad = CliRunner().invoke(app, ["import-openapi", str(write(tmp_path, {"openapi": "3.0.0"}, "x.json"))])
    assert bad.exit_code == 2 and "no `paths`" in bad.output


def plan_ir(ir: str, domain: str = "garage"):
    from pipeline.run import run_pipeline
    return run_pipeline("", domain, "2026-05-04", ir=ir)


def test_a_required_id_takes_the_output_of_the_one_call_that_makes_it(garage):
    run = plan_ir("_goal(g1, register_car).\n_goal(g2, book_repair).\n_plate(g1, \"KX 11\").\n")
    book = next(c for c in run.plan.calls if c.api == "book_repair")
    assert run.plan.calls[book.args["car_id"].ref].api == "register_car" and not book.args["car_id"].get_info
    # two calls could give it: which one is the user's to say, so it is asked
    run = plan_ir("_goal(g1, register_car).\n_goal(g2, get_cars).\n_goal(g3, book_repair).\n_plate(g1, \"KX 11\").\n")
    book = next(c for c in run.plan.calls if c.api == "book_repair")
    assert book.args["car_id"].ref is None and book.args["car_id"].get_info == "car_id"


def test_eval_openapi_tables_every_spec_and_scores_every_request(tmp_path):
    from pipeline.authoring.openapi_packs import import_folder
    from pipeline.evaluation.openapi import evaluate_requests

    specs = tmp_path / "specs"
    specs.mkdir()
    write(specs, GARAGE, "garage.json")
    write(specs, {"openapi": "3.0.0", "paths": {}}, "empty.yaml")
    requests = tmp_path / "requests.yaml"
    requests.write_text(yaml.safe_dump({"today": "2026-05-04", "specs": {
        "garage": [{"request": "book a repair for my car", "calls": ["book_repair"]}],
        "empty": [{"request": "anything", "calls": []}]}}))
    found, packs = import_folder(specs, tmp_path / "packs")
    result = evaluate_requests(packs, requests, tmp_path / "packs")
    rows = {row["spec"]: row for row in found}
    assert rows["empty"]["imported"] is False and "no operation could be read" in rows["empty"]["error"]
    assert rows["garage"]["operations"] == 4 and rows["garage"]["dataflow_edges"] >= 3
    by_spec = {r["spec"]: r for r in result["requests"]}
    assert by_spec["empty"]["problems"] == ["its spec was not imported"] and not by_spec["empty"]["passed"]
    assert by_spec["garage"]["latency_ms"] > 0
    assert result["summary"]["all"]["requests"] == 2


def test_an_enum_value_of_no_words_is_not_offered(tmp_path):
    """A query enum that lists '' for "no order" keeps only the values a user can name."""
    doc = {"openapi": "3.0.0", "info": {"title": "Films"}, "paths": {"/films": {"get": {
        "operationId": "listFilms", "summary": "List films in an order",
        "parameters": [{"name": "sort_by", "in": "query", "schema": {
            "type": "string", "enum": ["", "rating.asc", "rating.desc"]}}],
        "responses": {"200": {"description": "ok"}}}}}}
    spec = tmp_path / "films.json"
    spec.write_text(json.dumps(doc))
    _, pack, _, _ = import_openapi(spec, tmp_path)
    assert pack["arguments"]["sort_by"]["values"] == ["rating.asc", "rating.desc"]


def test_a_required_list_of_objects_is_one_item_built_from_the_request(tmp_path):
    """An invoice's lines: the first line's fields are arguments, its required ones asked for when not
    given, and the body sends them as a list of one item; an optional list of objects stays out."""
    from pipeline.sessions.executors import _json_body

    line = {"type": "object", "required": ["description", "amount"], "properties": {
        "description": {"type": "string"}, "amount": {"type": "number"}, "note": {"type": "string"}}}
    doc = {"openapi": "3.0.0", "info": {"title": "Bills"}, "paths": {"/invoices": {"post": {
        "operationId": "createInvoice", "summary": "Create an invoice",
        "requestBody": {"required": True, "content": {"application/json": {"schema": {
            "type": "object", "required": ["customer", "lines"], "properties": {
                "customer": {"type": "string"}, "lines": {"type": "array", "items": line},
                "attachments": {"type": "array", "items": {"type": "object", "properties": {
                    "url": {"type": "string"}}}}}}}}},
        "responses": {"201": {"description": "made"}}}}}}
    _, spec, document, _ = import_openapi(write(tmp_path, doc), tmp_path / "packs")
    # an optional list of objects is left out, and said
    assert document.every_part_left_out() == ["createInvoice: body field 'attachments': a list of objects"]
    api = spec["apis"]["create_invoice"]
    assert api["arguments"] == ["customer", "lines_description", "lines_amount", "lines_note"]
    assert set(api["optional"]) == {"lines_note"}  # the item's required fields are asked for
    assert api["http"]["body"]["lines[].amount"] == "lines_amount"
    binding = load_pack_spec_binding(tmp_path / "packs", "bills", "create_invoice")
    body = _json_body(binding, {"customer": "Acme", "lines_description": "Repairs", "lines_amount": "120.5"})
    assert body == {"customer": "Acme", "lines": [{"description": "Repairs", "amount": 120.5}]}


def load_pack_spec_binding(root, name, api):
    with using_packs_root(root):
        return load_pack(name).spec.apis[api].http


def test_a_phone_number_documented_as_e164_keeps_its_country_code(tmp_path):
    """A field whose description says E.164 reads a number with its country code and sends it as "+...";
    the slot head (which learned SGD's ten-digit phones) does not drop it. Other phone fields are as before."""
    from pipeline.language.readers import value_readings
    from pipeline.language.values import link_values

    doc = {"openapi": "3.0.0", "info": {"title": "Callers"}, "paths": {"/allowed": {"post": {
        "operationId": "allowCaller", "summary": "Allow a caller's phone number",
        "requestBody": {"required": True, "content": {"application/json": {"schema": {
            "type": "object", "required": ["phone_number"], "properties": {
                "phone_number": {"type": "string", "description": "The number, in E.164 format."},
                "backup_phone": {"type": "string", "description": "Another phone number."}}}}}},
        "responses": {"201": {"description": "made"}}}}}}
    _, spec, _, _ = import_openapi(write(tmp_path, doc), tmp_path / "packs")
    assert spec["arguments"]["phone_number"]["normalizer"] == "e164"
    assert spec["arguments"]["backup_phone"]["normalizer"] == "phone"
    with using_packs_root(tmp_path / "packs"):
        pack = load_pack("callers")
        text = "let +44 7700 900123 call us"
        kept = link_values(pack, text, value_readings(pack, text, date(2026, 5, 4)))
    assert [r.value for r in kept["phone_number"].kept] == ["+447700900123"]


def test_a_field_is_an_email_address_when_its_name_or_description_says_address(tmp_path):
    """"Recipient email address" and a field named `email` are addresses; an email's subject and a channel
    named "email" are about email, and their words are text."""
    fields = {"to": "Recipient email address.", "email_subject": "Email subject.",
              "channel": "How to reach them: sms or email.", "email": ""}
    doc = {"openapi": "3.0.0", "info": {"title": "Mailer"}, "paths": {"/emails": {"post": {
        "operationId": "sendEmail", "summary": "Send an email",
        "requestBody": {"required": True, "content": {"application/json": {"schema": {
            "type": "object", "required": ["to"], "properties": {
                name: {"type": "string", "description": words} for name, words in fields.items()}}}}},
        "responses": {"201": {"description": "sent"}}}}}}
    _, spec, _, _ = import_openapi(write(tmp_path, doc), tmp_path / "packs")
    normalizers = {name: spec["arguments"][name]["normalizer"] for name in fields}
    assert normalizers == {"to": "email", "email_subject": "title_text", "channel": "title_text", "email": "email"}
