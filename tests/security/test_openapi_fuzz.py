"""schemathesis against farmhand's own OpenAPI document: generated requests for every
operation (valid and invalid bodies, path parameters) never get a 5xx.

The server is a real uvicorn with a model that answers "ok"; request MCP servers are refused
by the default policy, so nothing is started. The example count is bounded for CI.

Generated values rarely hit the shapes that once broke the server (issue 25: 400-digit
integers, URLs the parser refuses, YAML tags, deep nesting), so every documented operation
is also sent each of them in each field of its body (one level down too) and in each path
parameter.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis.generation.case import Case
from tests.security.conftest import CHAT, HOSTILE_VALUES, NAMES, serve

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


BASE_VALUES: dict[str, Any] = {
    "model": "farm", "messages": CHAT["messages"], "input": "hi", "prompt": "hi",
    "max_tokens": 16, "name": "planted", "pattern": "*", "stream": False,
}  # fmt: skip
BY_TYPE: dict[str, Any] = {"string": "x", "integer": 1, "number": 1, "boolean": False,
                           "array": [], "object": {}}  # fmt: skip


def base_body(schema: dict[str, Any]) -> dict[str, Any]:
    """A body the operation would act on: its required fields, filled in plainly."""
    body = {}
    for name in schema.get("required", []):
        kind = schema.get("properties", {}).get(name, {}).get("type", "string")
        body[name] = BASE_VALUES.get(name, BY_TYPE.get(kind, "x"))
    return {**body, "stream": False} if "stream" in schema.get("properties", {}) else body


def hostile_bodies(schema: dict[str, Any]) -> list[dict[str, Any]]:
    base = base_body(schema)
    bodies = []
    for name, field in schema.get("properties", {}).items():
        for value in HOSTILE_VALUES:
            bodies.append({**base, name: value})
            for inner in list(field.get("properties", {}))[:8]:
                bodies.append({**base, name: {inner: value}})
    return bodies


def fill(template: str, param: str = "", name: str = "") -> str:
    """The path with its parameters filled in; `param` (if any) as `name`, escaped."""
    values = {"namespace": "default", "project": "demo", "model": "farm"}
    if param:
        values[param] = quote(name, safe="")
    for key, value in values.items():
        template = template.replace("{" + key + "}", value)
    return template


def test_every_operation_takes_the_hostile_shapes_without_a_5xx(tmp_path: Path) -> None:
    server, _ = serve(tmp_path)
    with server, httpx.Client(base_url=server.url, timeout=120) as client:
        document = client.get("/openapi.json").json()
        sent = 0
        for template, methods in document["paths"].items():
            for method, operation in methods.items():
                schema = (
                    operation.get("requestBody", {})
                    .get("content", {})
                    .get("application/json", {})
                    .get("schema", {})
                )
                params = [p["name"] for p in operation.get("parameters", []) if p["in"] == "path"]
                plain = fill(template)
                paths = [plain, *(fill(template, p, n) for p in params for n in NAMES)]
                bodies = hostile_bodies(schema) if schema else [None]
                for path in paths:
                    for body in bodies if path == plain else bodies[:1]:
                        content = None if body is None else json.dumps(body)
                        reply = client.request(
                            method.upper(),
                            path,
                            content=content,
                            headers={"content-type": "application/json"},
                        )
                        sent += 1
                        assert reply.status_code < 500, (method, path, body, reply.text)
        assert sent > 1000
