"""Ollama's model routes: `/api/tags`, `/api/show`, `/api/ps`, `/api/embed`,
`/api/embeddings` and `/api/pull` (NDJSON progress by default, one object with
`stream: false`). Thin: a dialect reads the body, `service/models.py` (and `pull.py`)
answer, the dialect writes Ollama's shapes; mistakes are `{"error": ...}` with a 4xx.
"""

from __future__ import annotations

import time
from collections.abc import AsyncGenerator
from contextlib import aclosing

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from farmhand.dialects.ollama.common import keep_alive_seconds, parse_body
from farmhand.dialects.ollama.errors import ollama_body
from farmhand.dialects.ollama.models import (
    EmbedBody,
    EmbeddingsBody,
    PullBody,
    ShowBody,
    pull_line,
    running,
    shortened,
    show,
    tag,
)
from farmhand.server.errors import api_error, error_response
from farmhand.server.json_body import json_body
from farmhand.server.json_response import JSONResponse
from farmhand.server.route_state import service_state
from farmhand.server.streaming import EventStream, StreamItem
from farmhand.service import models, pull
from farmhand.service.pull import PullStep


def routes() -> list[BaseRoute]:
    return [
        Route("/api/tags", tags_route, methods=["GET"]),
        Route("/api/show", show_route, methods=["POST"]),
        Route("/api/ps", ps_route, methods=["GET"]),
        Route("/api/embed", embed_route, methods=["POST"]),
        Route("/api/embeddings", embeddings_route, methods=["POST"]),
        Route("/api/pull", pull_route, methods=["POST"]),
    ]


async def tags_route(request: Request) -> Response:
    try:
        listed = await models.list_models(service_state(request))
    except Exception as exc:
        return error_response(exc, ollama_body)
    return JSONResponse({"models": [tag(facts) for facts in listed]})


async def show_route(request: Request) -> Response:
    try:
        body: ShowBody = parse_body(await json_body(request), ShowBody)
        facts = await models.describe(service_state(request), body.model_name())
        metadata = await models.verbose_metadata(facts) if body.verbose else None
    except Exception as exc:
        return error_response(exc, ollama_body)
    return JSONResponse(show(facts, metadata))


async def ps_route(request: Request) -> Response:
    try:
        loaded = await models.running(service_state(request))
    except Exception as exc:
        return error_response(exc, ollama_body)
    return JSONResponse({"models": [running(model) for model in loaded]})


async def embed_route(request: Request) -> Response:
    state = service_state(request)
    try:
        body: EmbedBody = parse_body(await json_body(request), EmbedBody)
        name = body.model_name()
        started = time.perf_counter_ns()
        done = await models.embed(state, name, body.texts(), truncate=body.truncate, normalize=True)
        vectors = [shortened(v, body.dimensions) for v in done.vectors]
        models.keep_loaded(state, state.model_config(name), keep_alive_seconds(body.keep_alive))
    except Exception as exc:
        return error_response(exc, ollama_body)
    return JSONResponse(
        {
            "model": name,
            "embeddings": vectors,
            "total_duration": time.perf_counter_ns() - started,
            "load_duration": 0,
            "prompt_eval_count": done.prompt_tokens,
        }
    )


async def embeddings_route(request: Request) -> Response:
    """The legacy endpoint: one prompt, one vector as the model gives it (not normalised);
    an empty prompt loads the model's embedding context and answers an empty vector."""
    state = service_state(request)
    try:
        body: EmbeddingsBody = parse_body(await json_body(request), EmbeddingsBody)
        name = body.model_name()
        keep_alive = keep_alive_seconds(body.keep_alive)
        texts = [body.prompt] if body.prompt else []
        done = await models.embed(state, name, texts, truncate=True, normalize=False)
        models.keep_loaded(state, state.model_config(name), keep_alive)
    except Exception as exc:
        return error_response(exc, ollama_body)
    return JSONResponse({"embedding": done.vectors[0] if done.vectors else []})


async def pull_route(request: Request) -> Response:
    state = service_state(request)
    host = request.client.host if request.client else None
    try:
        body: PullBody = parse_body(await json_body(request), PullBody)
        name = body.model_name()
        # Refusals and unknown names fail here, before the first line.
        pull.admit_pull(state, host)
        pull.catalog_model(name)
    except Exception as exc:
        return error_response(exc, ollama_body)
    if body.stream:
        return EventStream(
            lambda: _lines(pull.pull(state, name, host)),
            form="ndjson",
            error_response=lambda exc: error_response(exc, ollama_body),
            error_items=lambda exc: [{"error": api_error(exc).message}],
        )
    steps: list[PullStep] = []
    try:
        async with aclosing(pull.pull(state, name, host)) as pulling:
            steps.extend([step async for step in pulling])
    except Exception as exc:
        return error_response(exc, ollama_body)
    return JSONResponse(pull_line(steps[-1]))


async def _lines(steps: AsyncGenerator[PullStep, None]) -> AsyncGenerator[StreamItem, None]:
    async with aclosing(steps) as pulling:
        async for step in pulling:
            yield pull_line(step)
