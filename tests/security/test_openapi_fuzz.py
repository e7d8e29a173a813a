"""schemathesis against farmhand's own OpenAPI document: generated requests for every
operation (valid and invalid bodies, path parameters) never get a 5xx.

The server is a real uvicorn with a model that answers "ok"; request MCP servers are refused
by the default policy, so nothing is started. The example count is bounded for CI.
"""

from __future__ import annotations

from pathlib import Path

import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis.generation.case import Case
from tests.security.conftest import serve

EXAMPLES_PER_OPERATION = 40


def test_no_generated_request_is_a_5xx(tmp_path: Path) -> None:
    server, _ = serve(tmp_path)
    with server:
        schema = schemathesis.openapi.from_url(server.url + "/openapi.json")
        operations = [result.ok() for result in schema.get_all_operations()]
        assert len(operations) >= 15
        for operation in operations:

            @settings(
                max_examples=EXAMPLES_PER_OPERATION,
                deadline=None,
                suppress_health_check=list(HealthCheck),
                database=None,
            )
            @given(case=operation.as_strategy())
            def check(case: Case) -> None:
                response = case.call(base_url=server.url, timeout=60)
                assert response.status_code < 500, (
                    case.method, case.path, case.body, response.text
                )  # fmt: skip

            check()


def test_the_document_lists_every_route(tmp_path: Path) -> None:
    server, _ = serve(tmp_path)
    app = server.server.config.app
    routes = {route.path.replace(":path}", "}") for route in app.routes} - {"/", "/openapi.json"}
    with server:
        schema = schemathesis.openapi.from_url(server.url + "/openapi.json")
        documented = {result.ok().path for result in schema.get_all_operations()}
    assert routes == documented
