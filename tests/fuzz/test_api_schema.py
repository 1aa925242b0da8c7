"""Schemathesis against the API's own OpenAPI schema: every endpoint, with inputs generated from the
schema (valid and not), never answers 5xx, and answers no status its schema does not document. In process
(ASGI), against the real Redis of the tests."""

import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.specs.openapi.checks import status_code_conformance

from workers.app import app

schema = schemathesis.openapi.from_asgi("/openapi.json", app)


@schema.parametrize()
@settings(suppress_health_check=list(HealthCheck), deadline=None)
def test_no_endpoint_answers_a_server_error(case):
    response = case.call()
    if case.path == "/healthz" and case.method == "GET" and response.status_code == 503:
        assert response.json() == {"ok": False, "redis": True, "workers": 0}  # no worker runs: a state, not an error
    else:
        assert response.status_code < 500, (case.method, case.formatted_path, case.body, response.text)
    # every status answered is one the schema documents for that endpoint
    case.validate_response(response, checks=[status_code_conformance])
