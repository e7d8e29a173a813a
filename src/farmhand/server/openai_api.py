"""OpenAI Chat Completions over HTTP: `POST /v1/chat/completions` (SSE streaming and not),
`GET /v1/models`. The wire shapes are `dialects.openai.chat` (request) and
`dialects.openai.completion` (response); the chat is the service's.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import aclosing
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from farmhand.dialects.openai.chat import OpenAIChat, parse_chat
from farmhand.dialects.openai.completion import ChunkRenderer, completion_body
from farmhand.dialects.openai.errors import openai_body
from farmhand.errors import FarmhandError, UnknownModelError
from farmhand.server.errors import api_error, error_response
from farmhand.server.json_body import json_object
from farmhand.server.json_response import JSONResponse
from farmhand.server.route_state import service_state
from farmhand.server.streaming import EventStream, StreamItem
from farmhand.service.chat import complete_chat, run_chat
from farmhand.service.state import ServiceState

EPOCH = "1970-01-01T00:00:00Z"  # `created` 0, as Anthropic's RFC 3339 `created_at`


def routes() -> list[BaseRoute]:
    return [
        Route("/v1/chat/completions", chat_completions, methods=["POST"]),
        Route("/v1/models", list_models, methods=["GET"]),
        Route("/v1/models/{model:path}", get_model, methods=["GET"]),
    ]


async def list_models(request: Request) -> Response:
    names = service_state(request).model_names()
    # Anthropic's list fields beside OpenAI's: the anthropic SDK's models.list reads these.
    paging = {"has_more": False, "first_id": names[0], "last_id": names[-1]}
    return JSONResponse({"object": "list", "data": [_model(n) for n in names], **paging})


async def get_model(request: Request) -> Response:
    names = service_state(request).model_names()
    name = request.path_params["model"]
    if name not in names:
        known = ", ".join(names)
        return error_response(
            UnknownModelError(f"unknown model {name!r}; available models: {known}")
        )
    return JSONResponse(_model(name))


def _model(name: str) -> dict[str, Any]:
    """A model in OpenAI's shape and Anthropic's (`type`, `display_name`, `created_at`)."""
    openai = {"id": name, "object": "model", "created": 0, "owned_by": "farmhand"}
    return {**openai, "type": "model", "display_name": name, "created_at": EPOCH}


async def chat_completions(request: Request) -> Response:
    state = service_state(request)
    try:
        parsed = parse_chat(await json_object(request))
    except FarmhandError as exc:
        return error_response(exc)
    return await answer_chat(state, parsed)


async def answer_chat(state: ServiceState, parsed: OpenAIChat) -> Response:
    """The response to a parsed chat request: a completion, or its chunks as SSE. Shared
    with the projects API, whose chat route is this dialect over a project's models."""
    if parsed.stream:
        return chunk_stream(state, parsed)
    try:
        outcome = await complete_chat(state, parsed.chat)
    except FarmhandError as exc:
        return error_response(exc)
    return JSONResponse(completion_body(parsed, outcome.finished, outcome.reasoning))


def chunk_stream(state: ServiceState, parsed: OpenAIChat) -> EventStream:
    """SSE of chat.completion.chunk objects, ending with `data: [DONE]`."""

    async def chunks() -> AsyncGenerator[StreamItem, None]:
        renderer = ChunkRenderer(parsed)
        opened = False
        async with aclosing(run_chat(state, parsed.chat)) as events:
            async for event in events:
                if not opened:  # after the first event: errors before it are plain 4xx
                    yield renderer.opening()
                    opened = True
                for chunk in renderer.render(event):
                    yield chunk

    return EventStream(
        chunks,
        form="sse",
        error_response=error_response,
        error_items=lambda exc: [openai_body(api_error(exc))],
        closing=["[DONE]"],
    )
