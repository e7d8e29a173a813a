"""Anthropic Messages over HTTP: `POST /v1/messages` (SSE with named events, or one message
object) and `POST /v1/messages/count_tokens`. The wire shapes are `dialects.anthropic.request`
and `dialects.anthropic.response`; the chat is the service's.

Anthropic's headers (`anthropic-version`, `anthropic-beta`) and the `?beta=true` query that
its SDK's beta client and Claude Code add are accepted and need nothing: every feature is on.
Errors are Anthropic's `{"type": "error", "error": {"type", "message"}}`, in a stream as an
`error` event.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import aclosing

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from farmhand.dialects.anthropic.errors import anthropic_body
from farmhand.dialects.anthropic.request import AnthropicChat, parse_messages
from farmhand.dialects.anthropic.response import MessageRenderer
from farmhand.dialects.anthropic.tools import IGNORED_TOOLS_HEADER
from farmhand.errors import FarmhandError
from farmhand.server.errors import api_error, error_response
from farmhand.server.json_body import json_object
from farmhand.server.json_response import JSONResponse
from farmhand.server.route_state import service_state
from farmhand.server.streaming import EventStream, SSEEvent, StreamItem
from farmhand.service.chat import run_chat
from farmhand.service.state import ServiceState
from farmhand.service.tokens import count_tokens


def routes() -> list[BaseRoute]:
    return [
        Route("/v1/messages", messages, methods=["POST"]),
        Route("/v1/messages/count_tokens", count_message_tokens, methods=["POST"]),
    ]


def _error(exc: BaseException) -> Response:
    return error_response(exc, anthropic_body)


async def messages(request: Request) -> Response:
    state = service_state(request)
    try:
        parsed = parse_messages(await json_object(request))
    except FarmhandError as exc:
        return _error(exc)
    if parsed.stream:
        return event_stream(state, parsed)
    renderer = MessageRenderer(parsed.model)
    try:
        async with aclosing(run_chat(state, parsed.chat)) as events:
            async for event in events:
                renderer.render(event)
    except FarmhandError as exc:
        return _error(exc)
    return JSONResponse(renderer.message(), headers=ignored_header(parsed))


def ignored_header(parsed: AnthropicChat) -> dict[str, str]:
    """Names the server tools the request sent that farmhand left out (Anthropic's body has
    no place for it)."""
    return {IGNORED_TOOLS_HEADER: ", ".join(parsed.ignored_tools)} if parsed.ignored_tools else {}


def event_stream(state: ServiceState, parsed: AnthropicChat) -> EventStream:
    """The reply as Anthropic's named SSE events, message_start to message_stop."""

    async def items() -> AsyncGenerator[StreamItem, None]:
        renderer = MessageRenderer(parsed.model)
        opened = False
        async with aclosing(run_chat(state, parsed.chat)) as events:
            async for event in events:
                if not opened:  # after the first event: errors before it are plain 4xx
                    yield SSEEvent(*renderer.opening())
                    opened = True
                for name, data in renderer.render(event):
                    yield SSEEvent(name, data)

    return EventStream(
        items,
        form="sse",
        error_response=_error,
        error_items=lambda exc: [SSEEvent("error", anthropic_body(api_error(exc)))],
        headers=ignored_header(parsed),
    )


async def count_message_tokens(request: Request) -> Response:
    state = service_state(request)
    try:
        parsed = parse_messages(await json_object(request), counting=True)
        tokens = await count_tokens(state, parsed.chat)
    except FarmhandError as exc:
        return _error(exc)
    return JSONResponse({"input_tokens": tokens})
