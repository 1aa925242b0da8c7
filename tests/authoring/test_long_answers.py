"""An answer as long as its values: a call with five long values, or several calls, gets the tokens it needs
(a fixed budget cut the IR inside a fact, and the run failed as invalid IR)."""

from tests.authoring.spec_packs import imported_pack

_UUID = {"type": "string", "format": "uuid"}
SHIFTS = {"openapi": "3.0.3", "info": {"title": "Shifts"}, "paths": {
    "/companies/{company_uuid}/teams/{team_uuid}/shifts": {"post": {
        "operationId": "createShift", "summary": "Create a shift for a worker on a team",
        "parameters": [{"name": "company_uuid", "in": "path", "required": True, "schema": _UUID},
                       {"name": "team_uuid", "in": "path", "required": True, "schema": _UUID}],
        "requestBody": {"content": {"application/json": {"schema": {
            "type": "object", "required": ["worker_uuid", "start", "stop"],
            "properties": {"worker_uuid": _UUID, "start": {"type": "string", "format": "date-time"},
                           "stop": {"type": "string", "format": "date-time"}}}}}},
        "responses": {"200": {"description": "ok"}}}},
}}


def test_a_call_with_five_long_values_is_written_whole(tmp_path):
    from pipeline.run import run_pipeline

    request = ("add a shift for worker b7e4c2d9-6f1a-4a3b-8e5c-2d9f0a1b3c47 on team a91c4e07-5b2d-4f8e-8c3a-6d1e2f709b14 "
               "(company 3f2b9c1e-8a4d-4e2b-9f61-0c7d5a1b2e33) starting 2024-05-14T09:00:00Z and ending "
               "2024-05-14T17:00:00Z")
    with imported_pack(tmp_path, "shifts", SHIFTS):
        run = run_pipeline(request, "shifts", translator="hf")
    assert run.plan is not None, run.failure
    (call,) = run.plan.calls
    assert {a: b.value for a, b in call.args.items() if a.endswith("uuid")} == {
        "company_uuid": "3f2b9c1e-8a4d-4e2b-9f61-0c7d5a1b2e33", "team_uuid": "a91c4e07-5b2d-4f8e-8c3a-6d1e2f709b14",
        "worker_uuid": "b7e4c2d9-6f1a-4a3b-8e5c-2d9f0a1b3c47"}
