"""`server/dialect_registry.DIALECTS` is the one list of the API dialects: the app serves
their routes from it, a path's error shape comes from it, and /openapi.json describes each
dialect's paths from it. Whatever route the app has besides is one of the routes below that
are no dialect's, each with its reason."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from starlette.routing import Route
from tests.support.live import scripted_config

from farmhand.assembly import create_app
from farmhand.dialects.api_error import ApiError
from farmhand.dialects.openai.errors import openai_body
from farmhand.server.dialect_registry import (
    DIALECTS,
    DialectSpec,
    dialect_for_path,
    dialect_routes,
    error_body_for_path,
)
from farmhand.server.errors import mcp_body
from farmhand.server.openapi import openapi_document

NOT_DIALECTS = {
    # farmhand's own HTTP API
    "/health", "/ready", "/metrics", "/openapi.json",
    "/v1/projects/{namespace}", "/v1/projects/{namespace}/{project}",
    "/v1/projects/{namespace}/{project}/chat/completions",
    # the playground page and its routes, eval reports
    "/", "/playground/{name}", "/favicon.ico", "/api/mcp/servers", "/api/mcp/call",
    "/api/mcp/call/answer", "/api/conversations", "/api/eval/reports", "/eval/reports/{name}",
    # farmhand as an MCP server and as an A2A agent (JSON-RPC, their SDKs' own wire)
    "/mcp", "/a2a", "/.well-known/agent-card.json",
}  # fmt: skip
SAMPLE = ApiError(404, "no such thing", "invalid_request_error", None, "not_found")


def route_path(route: Route) -> str:
    return route.path.replace(":path}", "}")


def paths_of(dialect: DialectSpec) -> set[str]:
    return {route_path(route) for route in dialect.routes() if isinstance(route, Route)}


@pytest.fixture(scope="module")
def app_paths(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    app = create_app(scripted_config(), home=tmp_path_factory.mktemp("home"), api_keys=[])
    return [route_path(route) for route in app.routes if isinstance(route, Route)]


def test_the_dialects_have_one_name_and_own_no_path_twice() -> None:
    names = [dialect.name for dialect in DIALECTS]
    assert len(set(names)) == len(names) == 4
    for dialect in DIALECTS:
        for other in DIALECTS:
            if other is not dialect:
                assert not any(other.owns(p) for p in dialect.prefixes), (dialect, other)


@pytest.mark.parametrize("dialect", DIALECTS, ids=lambda d: d.name)
def test_each_prefix_maps_back_to_its_dialect(dialect: DialectSpec) -> None:
    for prefix in dialect.prefixes:
        for path in (prefix, prefix + "/", prefix + "/anything/below"):
            assert dialect_for_path(path) is dialect
            assert error_body_for_path(path) is dialect.error_body
        assert dialect_for_path(prefix + "x") is not dialect  # a prefix, not a substring


@pytest.mark.parametrize("dialect", DIALECTS, ids=lambda d: d.name)
def test_each_dialect_owns_its_routes(dialect: DialectSpec) -> None:
    paths = paths_of(dialect)
    assert paths
    assert all(dialect_for_path(path) is dialect for path in paths), paths


def test_the_app_serves_the_dialects_first_then_only_routes_that_are_no_dialects(
    app_paths: list[str],
) -> None:
    served = [route_path(route) for route in dialect_routes() if isinstance(route, Route)]
    assert app_paths[: len(served)] == served  # the chat routes are the first tried
    others = set(app_paths[len(served) :])
    assert others == NOT_DIALECTS
    # The playground's and the eval reports' routes under /api answer in Ollama's shape, like
    # every /api path; no other route of no dialect's sits under a dialect's prefix.
    under_dialects = {path for path in others if dialect_for_path(path) is not None}
    assert under_dialects == {
        "/api/mcp/servers", "/api/mcp/call", "/api/mcp/call/answer", "/api/conversations",
        "/api/eval/reports",
    }  # fmt: skip


def test_paths_of_no_dialect_answer_in_openai_or_json_rpc_shape() -> None:
    assert error_body_for_path("/v1/projects/team/app") is openai_body
    assert error_body_for_path("/health") is openai_body
    assert error_body_for_path("/mcp") is mcp_body
    assert error_body_for_path("/mcp/anything") is mcp_body
    assert error_body_for_path("/a2a") is mcp_body


@pytest.mark.parametrize("dialect", DIALECTS, ids=lambda d: d.name)
def test_the_openapi_document_describes_each_dialects_routes(dialect: DialectSpec) -> None:
    part = dialect.openapi()
    assert set(part) == paths_of(dialect)
    documented = openapi_document("0")["paths"]
    assert {path: documented[path] for path in part} == part


def test_the_openapi_document_is_the_dialects_and_the_rest(app_paths: list[str]) -> None:
    documented = set(openapi_document("0")["paths"])
    # "/" is the page, "/openapi.json" the document itself: neither is an API operation.
    assert documented == set(app_paths) - {"/", "/openapi.json"}


@pytest.mark.anyio
@pytest.mark.parametrize("dialect", DIALECTS, ids=lambda d: d.name)
async def test_a_missing_route_under_a_prefix_answers_in_the_dialects_shape(
    dialect: DialectSpec, tmp_path: Path
) -> None:
    app = create_app(scripted_config(), home=tmp_path, api_keys=[])
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
        answer = await client.get(dialect.prefixes[0] + "/no/such/route")
    assert answer.status_code in (404, 405)
    body = answer.json()
    shaped = dialect.error_body(ApiError(answer.status_code, "m", "t"))
    assert body.keys() == shaped.keys()
    assert "no such endpoint" in str(body) or "is not allowed" in str(body)
