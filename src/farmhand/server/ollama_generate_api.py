"""Ollama's `POST /api/generate`: one prompt completed, no tools (`service/generate.py`),
as NDJSON lines by default or one object with `stream: false`. An empty prompt loads the
model (`done_reason: "load"`), or with `keep_alive: 0` unloads it ("unload")."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import aclosing
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from farmhand.dialects.ollama.common import parse_body
from farmhand.dialects.ollama.errors import ollama_body
from farmhand.dialects.ollama.generate import GenerateBody, GenerateLines, generate_request
from farmhand.dialects.ollama.template import TemplateLimits
from farmhand.errors import LoopError
from farmhand.messages import Finish, ReasoningDelta, TextDelta
from farmhand.server.errors import api_error, error_response
from farmhand.server.json_body import json_body
from farmhand.server.json_response import JSONResponse
from farmhand.server.route_state import service_state
from farmhand.server.streaming import EventStream, StreamItem
from farmhand.service import models
from farmhand.service.generate import GenerateRequest, Generation, generate, load
from farmhand.service.state import ServiceState


def routes() -> list[BaseRoute]:
    return [Route("/api/generate", generate_route, methods=["POST"])]


async def generate_route(request: Request) -> Response:
    state = service_state(request)
    try:
        body: GenerateBody = parse_body(await json_body(request), GenerateBody)
        server = state.config.server
        limits = TemplateLimits(server.max_template_depth, server.max_template_chars)
        wanted = generate_request(body, limits)
        num_ctx = body.options.num_ctx if body.options else None
        think = wanted.settings.think
        model = await models.check_options(state, body.model, num_ctx=num_ctx, think=think)
        keep_alive = body.keep_alive_seconds()
        lines = GenerateLines(body.model)
        if body.loads_only:
            if keep_alive == 0:
                models.keep_loaded(state, model, keep_alive)
                return JSONResponse(lines.loaded("unload"))
            await load(state, body.model)
            models.keep_loaded(state, model, keep_alive)
            return JSONResponse(lines.loaded("load"))
    except Exception as exc:
        return error_response(exc, ollama_body)
    run = _Generate(state, wanted, lines, lambda: models.keep_loaded(state, model, keep_alive))
    if body.stream:
        return EventStream(
            run.lines,
            form="ndjson",
            error_response=lambda exc: error_response(exc, ollama_body),
            error_items=lambda exc: [{"error": api_error(exc).message}],
        )
    try:
        return JSONResponse(await run.whole())
    except Exception as exc:
        return error_response(exc, ollama_body)


class _Generate:
    def __init__(
        self, state: ServiceState, wanted: GenerateRequest, lines: GenerateLines, after: Any
    ) -> None:
        self.state, self.wanted, self.render, self.after = state, wanted, lines, after
        self.generation = Generation()

    def _events(self) -> AsyncGenerator[Any, None]:
        return generate(self.state, self.wanted, self.generation)

    async def lines(self) -> AsyncGenerator[StreamItem, None]:
        async with aclosing(self._events()) as events:
            async for event in events:
                if isinstance(event, TextDelta):
                    yield self.render.piece(event.text)
                elif isinstance(event, ReasoningDelta):
                    yield self.render.piece(thinking=event.text)
                elif isinstance(event, Finish):
                    self.after()
                    yield self.render.final(event, self.generation.context())

    async def whole(self) -> dict[str, Any]:
        thinking: list[str] = []
        finish: Finish | None = None
        # Read to the end (Finish is the last event): leaving the provider's stream open
        # would have asyncio close it with a task of its own.
        async with aclosing(self._events()) as events:
            async for event in events:
                if isinstance(event, ReasoningDelta):
                    thinking.append(event.text)
                elif isinstance(event, TextDelta):
                    self.render.piece(event.text)  # notes the first token's time
                elif isinstance(event, Finish):
                    self.after()
                    finish = event
        if finish is None:
            raise LoopError("the model ended without finishing its answer")
        text = "".join(self.generation.answer)
        context = self.generation.context()
        return self.render.final(finish, context, text, "".join(thinking))
