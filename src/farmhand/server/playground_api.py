"""The playground: the page at `/` and its files, and the few routes it needs besides the
public APIs it talks to (Responses for chat, `/api/tools` and `/api/tools/search`):

    GET  /api/mcp/servers    the configured MCP servers and their state (read-only)
    POST /api/mcp/call       {server, tool, arguments, approved?}: run one tool by hand
    GET  /api/conversations  the stored Responses conversations, newest first (?limit=)

They sit behind the same guard and API keys as every route.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from farmhand.errors import FarmhandError, RequestError
from farmhand.server import playground_files
from farmhand.server.errors import error_response
from farmhand.server.json_body import json_object
from farmhand.server.json_response import JSONResponse
from farmhand.server.route_state import service_state
from farmhand.service.hand_call import call_by_hand
from farmhand.service.mcp_status import server_statuses

MAX_CONVERSATIONS = 200


def routes() -> list[BaseRoute]:
    return [
        Route("/", page, methods=["GET", "HEAD"]),
        Route(playground_files.PREFIX + "{name}", asset, methods=["GET", "HEAD"]),
        Route("/api/mcp/servers", servers, methods=["GET"]),
        Route("/api/mcp/call", call, methods=["POST"]),
        Route("/api/conversations", conversations, methods=["GET"]),
    ]


def _file(name: str) -> Response:
    return Response(
        playground_files.read(name),
        media_type=playground_files.media_type(name),
        headers=playground_files.SECURITY_HEADERS,
    )


async def page(_: Request) -> Response:
    return _file(playground_files.PAGE)


async def asset(request: Request) -> Response:
    name = request.path_params["name"]
    if name not in playground_files.ASSETS:
        missing = RequestError(f"the playground has no file {name!r}", status=404)
        return error_response(missing)
    return _file(name)


async def servers(request: Request) -> Response:
    return JSONResponse({"servers": server_statuses(service_state(request))})


async def call(request: Request) -> Response:
    try:
        body = await json_object(request)
        server, tool, arguments, approved = _call_fields(body)
        output = await call_by_hand(service_state(request), server, tool, arguments, approved)
    except FarmhandError as exc:
        return error_response(exc, "ollama")
    return JSONResponse(
        {"server": server, "tool": tool, "output": output.text, "is_error": output.is_error}
    )


def _call_fields(body: dict[str, Any]) -> tuple[str, str, dict[str, Any], bool]:
    unknown = sorted(set(body) - {"server", "tool", "arguments", "approved"})
    if unknown:
        raise RequestError(
            f"unknown field(s) {', '.join(unknown)}; send server, tool, arguments, approved"
        )
    server, tool = body.get("server"), body.get("tool")
    if not isinstance(server, str) or not server:
        raise RequestError("server must be the name of a configured MCP server", param="server")
    if not isinstance(tool, str) or not tool:
        raise RequestError("tool must be the name of one of the server's tools", param="tool")
    arguments = body.get("arguments", {})
    if not isinstance(arguments, dict):
        raise RequestError(
            "arguments must be an object of the tool's parameters", param="arguments"
        )
    approved = body.get("approved", False)
    if not isinstance(approved, bool):
        raise RequestError("approved must be true or false", param="approved")
    return server, tool, arguments, approved


async def conversations(request: Request) -> Response:
    raw = request.query_params.get("limit", "50")
    if not raw.isdigit() or not 1 <= int(raw) <= MAX_CONVERSATIONS:
        refusal = RequestError(
            f"limit must be a number from 1 to {MAX_CONVERSATIONS}", param="limit"
        )
        return error_response(refusal, "ollama")
    found = service_state(request).response_store().conversations(int(raw))
    return JSONResponse({"conversations": found})
