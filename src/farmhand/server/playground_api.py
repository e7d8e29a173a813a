"""The playground: the page at `/` and its files, and the few routes it needs besides the
public APIs it talks to (Responses for chat, `/api/tools` and `/api/tools/search`):

    GET  /api/mcp/servers    the configured MCP servers and their state (read-only)
    POST /api/mcp/call       {server, tool, arguments, approved?}: run one tool by hand;
                             answers its result, or the question its server asks
    POST /api/mcp/call/answer {question_id, action, content?}: answer that question; answers
                             the call's result (or its next question)
    GET  /api/conversations  the stored Responses conversations, newest first (?limit=)

They sit behind the same guard and API keys as every route.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from farmhand.dialects.ollama.errors import ollama_body
from farmhand.dialects.responses.questions import ACTIONS, question_item
from farmhand.errors import AnswerError, FarmhandError, RequestError
from farmhand.runtime.events import InputRequested
from farmhand.server import playground_files
from farmhand.server.errors import error_response
from farmhand.server.json_body import json_object
from farmhand.server.json_response import JSONResponse
from farmhand.server.route_state import service_state
from farmhand.service.hand_call import (
    HandCall,
    HandOutcome,
    answer_hand_call,
    read_hand_call,
    start_hand_call,
)
from farmhand.service.mcp_status import server_statuses

MAX_CONVERSATIONS = 200


def routes() -> list[BaseRoute]:
    return [
        Route("/", page, methods=["GET", "HEAD"]),
        Route(playground_files.PREFIX + "{name}", asset, methods=["GET", "HEAD"]),
        Route(playground_files.FAVICON_PATH, favicon, methods=["GET", "HEAD"]),
        Route("/api/mcp/servers", servers, methods=["GET"]),
        Route("/api/mcp/call", call, methods=["POST"]),
        Route("/api/mcp/call/answer", answer, methods=["POST"]),
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


async def favicon(_: Request) -> Response:
    """The icon browsers ask every page of this server for (an eval report has none of its
    own: it links nothing)."""
    return _file(playground_files.FAVICON)


async def asset(request: Request) -> Response:
    name = request.path_params["name"]
    if name not in playground_files.ASSETS:
        missing = RequestError(f"the playground has no file {name!r}", status=404)
        return error_response(missing)
    return _file(name)


async def servers(request: Request) -> Response:
    return JSONResponse({"servers": server_statuses(service_state(request))})


async def call(request: Request) -> Response:
    state = service_state(request)
    try:
        body = await json_object(request)
        server, tool, arguments, approved = _call_fields(body)
        started = start_hand_call(state, server, tool, arguments, approved)
        return _outcome(started, await read_hand_call(state, started))
    except FarmhandError as exc:
        return error_response(exc, ollama_body)


async def answer(request: Request) -> Response:
    state = service_state(request)
    try:
        question_id, action, content = _answer_fields(await json_object(request))
        going_on = answer_hand_call(state, question_id, action, content)
        return _outcome(going_on, await read_hand_call(state, going_on))
    except AnswerError as exc:  # the question stays open unless it is unknown
        refusal = RequestError(str(exc), param="question_id", status=404 if exc.unknown else 400)
        return error_response(refusal, ollama_body)
    except FarmhandError as exc:
        return error_response(exc, ollama_body)


def _outcome(call: HandCall, outcome: HandOutcome) -> Response:
    """The call's result, or the question it waits on (the Responses API's item for it)."""
    body: dict[str, Any] = {"server": call.server, "tool": call.tool}
    if isinstance(outcome, InputRequested):
        body["question"] = question_item(outcome)
    else:
        body.update(output=outcome.content, is_error=outcome.is_error)
    return JSONResponse(body)


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


def _answer_fields(body: dict[str, Any]) -> tuple[str, str, dict[str, Any] | None]:
    unknown = sorted(set(body) - {"question_id", "action", "content"})
    if unknown:
        raise RequestError(
            f"unknown field(s) {', '.join(unknown)}; send question_id, action, content"
        )
    question_id, action = body.get("question_id"), body.get("action")
    if not isinstance(question_id, str) or not question_id:
        raise RequestError(
            "question_id must be the id of the question the call asked", param="question_id"
        )
    if action not in ACTIONS:
        raise RequestError(f"action must be one of {', '.join(ACTIONS)}", param="action")
    content = body.get("content")
    if content is not None and not isinstance(content, dict):
        raise RequestError("content must be an object of the form's fields", param="content")
    return question_id, action, content


async def conversations(request: Request) -> Response:
    raw = request.query_params.get("limit", "50")
    if not raw.isdigit() or not 1 <= int(raw) <= MAX_CONVERSATIONS:
        refusal = RequestError(
            f"limit must be a number from 1 to {MAX_CONVERSATIONS}", param="limit"
        )
        return error_response(refusal, ollama_body)
    found = service_state(request).response_store().conversations(int(raw))
    return JSONResponse({"conversations": found})
