"""Ollama's API: `/api/chat` (NDJSON streaming by default), `/api/tools`,
`/api/tools/search`, `/api/tasks/{id}` and `/api/version`, with the MCP extensions of
Ollama's MCP API; the model routes (`ollama_models_api.py`: tags, show, ps, embed, pull)
and `/api/generate` (`ollama_generate_api.py`) are registered with these.

Every chat is a task (`tasks.py`): its id and status ride on every response line.
`message.tool_calls` holds the calls the client must run itself (its own `tools`); for a
client with no tools of its own, the final message lists there the MCP calls farmhand ran,
marked `executed` (`dialects/ollama/chat.py` says why). What those calls returned is in
`tool_results` when the request asks for it with `include_tool_results`.

A streamed chat is `server.streaming`'s NDJSON: a failure before the first line is still an
HTTP error with its own status, one after it an `{"error": ...}` line, as Ollama streams them.
"""

from __future__ import annotations

import importlib.metadata
from collections.abc import AsyncGenerator
from contextlib import aclosing
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from farmhand.config.models import ModelConfig
from farmhand.dialects.ollama.chat import (
    ChatBody,
    ChatLines,
    ToolSearchBody,
    chat_request,
    loaded_line,
)
from farmhand.dialects.ollama.common import parse_body
from farmhand.dialects.ollama.errors import ollama_body
from farmhand.errors import RequestError
from farmhand.runtime.events import LoopFinished, ReasoningChunk, TextChunk
from farmhand.server import ollama_generate_api, ollama_models_api
from farmhand.server.errors import api_error, error_headers, error_response
from farmhand.server.json_body import json_body
from farmhand.server.json_response import JSONResponse
from farmhand.server.route_state import service_state
from farmhand.server.streaming import EventStream, StreamItem
from farmhand.service.chat import ChatRequest, run_chat
from farmhand.service.generate import load
from farmhand.service.mcp_servers import parse_mcp_servers
from farmhand.service.models import check_options, keep_loaded
from farmhand.service.state import ServiceState
from farmhand.service.tasks import TaskStatus
from farmhand.service.tool_search import search_tools

DISCONNECTED = "the client disconnected before the answer was complete"


def routes() -> list[BaseRoute]:
    return [
        Route("/api/chat", chat, methods=["POST"]),
        *ollama_generate_api.routes(),
        Route("/api/tools", list_tools, methods=["GET"]),
        Route("/api/tools/search", search_tools_route, methods=["POST"]),
        Route("/api/tasks/{task_id}", get_task, methods=["GET"]),
        Route("/api/version", version, methods=["GET"]),
        *ollama_models_api.routes(),
    ]


# POST /api/chat


async def chat(request: Request) -> Response:
    state = service_state(request)
    try:
        body: ChatBody = parse_body(await json_body(request), ChatBody)
        if not body.messages and body.model:  # Ollama's "load the model" (or unload it)
            return JSONResponse(await _load(state, body))
        chat = chat_request(body)
        num_ctx = body.options.num_ctx if body.options else None
        think = chat.settings.think
        model = await check_options(state, body.model, num_ctx=num_ctx, think=think)
        if body.task_id is not None:
            _check_not_running(state, body.task_id)
    except Exception as exc:
        return error_response(exc, ollama_body)
    run = _Run(state, body, chat, model)
    if body.stream:
        return EventStream(
            run.lines,
            form="ndjson",
            error_response=run.error_response,
            error_items=lambda exc: [run.error_body(exc)[1]],
            on_disconnect=lambda: run.finish(DISCONNECTED),
        )
    return await run.complete()


async def _load(state: ServiceState, body: ChatBody) -> dict[str, Any]:
    keep_alive = body.keep_alive_seconds()
    model = state.model_config(body.model)
    if keep_alive != 0:
        await load(state, body.model)
    keep_loaded(state, model, keep_alive)
    return loaded_line(body.model, "unload" if keep_alive == 0 else "load")


def _check_not_running(state: ServiceState, task_id: str) -> None:
    task = state.task_store().get(task_id)
    if task is not None and task.status == "working":
        raise RequestError(
            f"task {task_id!r} is still working; wait for it to finish or use another task_id",
            param="task_id",
            status=409,
        )


class _Run:
    """One chat as a task: runs the loop, its events rendered as Ollama's lines."""

    def __init__(
        self, state: ServiceState, body: ChatBody, chat: ChatRequest, model: ModelConfig
    ) -> None:
        self.state, self.body, self.chat, self.model = state, body, chat, model
        self.store = state.task_store()
        self.task_id = self.store.start(body.task_id, body.model, "ollama").id
        self.status: TaskStatus = "working"
        self.render = ChatLines(body, self._task_fields)

    def finish(self, error: str | None = None) -> None:
        if self.status == "working":
            task = self.store.finish(self.task_id, error)
            self.status = task.status if task is not None else "failed"
            keep_loaded(self.state, self.model, self.body.keep_alive_seconds())

    async def complete(self) -> Response:
        """`stream: false`: the whole loop, then one object."""
        thinking: list[str] = []
        finished: LoopFinished | None = None
        try:
            async with aclosing(run_chat(self.state, self.chat)) as events:
                async for event in events:
                    if isinstance(event, ReasoningChunk):
                        thinking.append(event.text)
                    elif isinstance(event, TextChunk):
                        self.render.mark_first_token()
                    elif isinstance(event, LoopFinished):
                        finished = event
        except Exception as exc:
            return self.error_response(exc)
        except BaseException:
            self.finish("the request was cancelled")
            raise
        if finished is None:
            return self.error_response(RuntimeError("the tool loop ended without an answer"))
        self.finish()
        await self.store.written()  # another replica asked for the task finds it finished
        return JSONResponse(self.render.final(finished, finished.answer, "".join(thinking)))

    async def lines(self) -> AsyncGenerator[StreamItem, None]:
        """`stream: true`: one object per piece of text, then the final one. The stream
        starts with the first line, so a failure before it keeps its own HTTP status."""
        async with aclosing(run_chat(self.state, self.chat)) as events:
            async for event in events:
                if isinstance(event, TextChunk):
                    yield self.render.text(event.text)
                elif isinstance(event, ReasoningChunk):
                    yield self.render.thinking(event.text)
                elif isinstance(event, LoopFinished):
                    self.finish()
                    await self.store.written()
                    if event.pending_calls:
                        yield self.render.calls(event.pending_calls)
                    yield self.render.final(event, "")

    def _task_fields(self) -> dict[str, Any]:
        return {"task_id": self.task_id, "task_status": self.status}

    def error_body(self, exc: BaseException) -> tuple[int, dict[str, Any]]:
        error = api_error(exc)
        self.finish(error.message)
        return error.status, {"error": error.message, **self._task_fields()}

    def error_response(self, exc: BaseException) -> Response:
        status, body = self.error_body(exc)
        return JSONResponse(body, status_code=status, headers=error_headers(exc))


# GET /api/tools, POST /api/tools/search


async def list_tools(request: Request) -> Response:
    state = service_state(request)
    try:
        found = await search_tools(state, model=request.query_params.get("model"))
    except Exception as exc:
        return error_response(exc, ollama_body)
    body = found.to_json()
    del body["pattern"]  # Ollama's listing has none
    return JSONResponse(body)


async def search_tools_route(request: Request) -> Response:
    state = service_state(request)
    try:
        body: ToolSearchBody = parse_body(await json_body(request), ToolSearchBody)
        requested = parse_mcp_servers(body.mcp_servers)
        found = await search_tools(
            state, body.pattern, model=body.model, requested=requested, context=body.context
        )
    except Exception as exc:
        return error_response(exc, ollama_body)
    return JSONResponse(found.to_json(body.limit))


# GET /api/tasks/{id}


async def get_task(request: Request) -> Response:
    task_id = request.path_params["task_id"]
    task = service_state(request).task_store().get(task_id)
    if task is None:
        return error_response(
            RequestError(f"task {task_id!r} not found; task ids come from /api/chat", status=404),
            ollama_body,
        )
    return JSONResponse(task.to_json())


# GET /api/version


async def version(_: Request) -> Response:
    try:
        number = importlib.metadata.version("farmhand")
    except importlib.metadata.PackageNotFoundError:
        number = "0.0.0"
    return JSONResponse({"version": number})
