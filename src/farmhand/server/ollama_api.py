"""Ollama's API: `/api/chat` (NDJSON streaming by default), `/api/tags`, `/api/tools`,
`/api/tools/search` and `/api/tasks/{id}`, with the MCP extensions of Ollama's MCP API.

Every chat is a task (`tasks.py`): its id and status ride on every response line.
`message.tool_calls` holds only the calls the client must run itself (its own `tools`);
calls farmhand ran on MCP servers are reported in `tool_results` when the request asks
for them with `include_tool_results`.

A streamed chat runs inside its response (`_StreamedChat`), in one task from the first
model turn to the last line, so a failure before the first line is still an HTTP error
with its own status, and one after it is an `{"error": ...}` line, as Ollama streams them.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import time
from collections.abc import AsyncGenerator, Sequence
from contextlib import aclosing, suppress
from typing import Any

import anyio
from anyio import CancelScope
from pydantic import Field
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route
from starlette.types import Receive, Scope, Send

from farmhand.config.models import McpServerConfig, ModelConfig
from farmhand.messages import ToolCall
from farmhand.runtime.events import LoopFinished, ReasoningChunk, TextChunk
from farmhand.runtime.session import ToolSettings
from farmhand.server.chat import ChatRequest, ChatServers, admit_servers, run_chat, server_toolsets
from farmhand.server.errors import (
    RequestError,
    api_error,
    error_response,
)
from farmhand.server.json_body import json_body
from farmhand.server.mcp_request import parse_mcp_servers
from farmhand.server.ollama_request import ChatBody, _Wire, chat_request, parse_body
from farmhand.server.state import ServerState
from farmhand.server.tasks import TaskStatus, iso_time
from farmhand.tools.definition import ToolDefinition
from farmhand.toolsets.mcp.discovery import DiscoveryToolset
from farmhand.toolsets.wrappers import SEPARATOR

NDJSON = "application/x-ndjson"
DONE_REASONS = {"stop": "stop", "length": "length", "client_tool_calls": "stop"}


def routes() -> list[BaseRoute]:
    return [
        Route("/api/chat", chat, methods=["POST"]),
        Route("/api/tags", tags, methods=["GET"]),
        Route("/api/tools", list_tools, methods=["GET"]),
        Route("/api/tools/search", search_tools, methods=["POST"]),
        Route("/api/tasks/{task_id}", get_task, methods=["GET"]),
        Route("/api/version", version, methods=["GET"]),
    ]


def _state(request: Request) -> ServerState:
    state: ServerState = request.app.state.farmhand
    return state


def _model(state: ServerState, name: str | None) -> ModelConfig:
    """The named model; UnknownModelError (404) when there is none by that name."""
    return state.model_config(name)


# POST /api/chat


async def chat(request: Request) -> Response:
    state = _state(request)
    try:
        body: ChatBody = parse_body(await json_body(request), ChatBody)
        chat = chat_request(body)
        _model(state, body.model)
        if body.task_id is not None:
            _check_not_running(state, body.task_id)
    except Exception as exc:
        return error_response(exc, "ollama")
    run = _Run(state, body, chat)
    if body.stream:
        return _StreamedChat(run)
    return await run.complete()


def _check_not_running(state: ServerState, task_id: str) -> None:
    task = state.task_store().get(task_id)
    if task is not None and task.status == "working":
        raise RequestError(
            f"task {task_id!r} is still working; wait for it to finish or use another task_id",
            param="task_id",
            status=409,
        )


class _Run:
    """One chat as a task: runs the loop and renders its events as Ollama's lines."""

    def __init__(self, state: ServerState, body: ChatBody, chat: ChatRequest) -> None:
        self.state, self.body, self.chat = state, body, chat
        self.store = state.task_store()
        self.task_id = self.store.start(body.task_id, body.model, "ollama").id
        self.status: TaskStatus = "working"
        self.started = time.perf_counter_ns()
        self.first_token: int | None = None

    def finish(self, error: str | None = None) -> None:
        if self.status == "working":
            task = self.store.finish(self.task_id, error)
            self.status = task.status if task is not None else "failed"

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
                        self._mark_first_token()
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
        return JSONResponse(self.final(finished, finished.answer, "".join(thinking)))

    async def lines(self) -> AsyncGenerator[dict[str, Any], None]:
        """`stream: true`: one object per piece of text, then the final one."""
        async with aclosing(run_chat(self.state, self.chat)) as events:
            async for event in events:
                if isinstance(event, TextChunk):
                    self._mark_first_token()
                    yield self.chunk({"content": event.text})
                elif isinstance(event, ReasoningChunk):
                    yield self.chunk({"content": "", "thinking": event.text})
                elif isinstance(event, LoopFinished):
                    self.finish()
                    if event.pending_calls:
                        calls = _ollama_calls(event.pending_calls)
                        yield self.chunk({"content": "", "tool_calls": calls})
                    yield self.final(event, "")

    def _mark_first_token(self) -> None:
        if self.first_token is None:
            self.first_token = time.perf_counter_ns()

    def _task_fields(self) -> dict[str, Any]:
        return {"task_id": self.task_id, "task_status": self.status}

    def chunk(self, message: dict[str, Any]) -> dict[str, Any]:
        return {
            "model": self.body.model,
            "created_at": iso_time(time.time()),
            "message": {"role": "assistant", **message},
            "done": False,
            **self._task_fields(),
        }

    def final(self, finished: LoopFinished, content: str, thinking: str = "") -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": content}
        if thinking:
            message["thinking"] = thinking
        if finished.pending_calls and not self.body.stream:
            message["tool_calls"] = _ollama_calls(finished.pending_calls)
        now = time.perf_counter_ns()
        first = self.first_token or now
        response: dict[str, Any] = {
            "model": self.body.model,
            "created_at": iso_time(time.time()),
            "message": message,
            "done": True,
            "done_reason": DONE_REASONS.get(finished.stop_reason, finished.stop_reason),
            "total_duration": now - self.started,
            "load_duration": 0,
            "prompt_eval_count": finished.usage.prompt_tokens,
            "prompt_eval_duration": first - self.started,
            "eval_count": finished.usage.completion_tokens,
            "eval_duration": now - first,
        }
        if self.body.include_tool_results:
            response["tool_results"] = [
                {
                    "tool_name": record.call.name,
                    "arguments": record.call.arguments,
                    "content": record.result.content,
                }
                for record in finished.tool_calls
            ]
        return {**response, **self._task_fields()}

    def error_body(self, exc: BaseException) -> tuple[int, dict[str, Any]]:
        error = api_error(exc)
        self.finish(error.message)
        return error.status, {"error": error.message, **self._task_fields()}

    def error_response(self, exc: BaseException) -> Response:
        status, body = self.error_body(exc)
        return JSONResponse(body, status_code=status)


def _ollama_calls(calls: Sequence[ToolCall]) -> list[dict[str, Any]]:
    return [{"function": {"name": c.name, "arguments": c.arguments}} for c in calls]


class _StreamedChat(Response):
    """NDJSON lines, produced by running the chat in the task that sends them. The status
    line waits for the first line: errors before it get their own status."""

    media_type = NDJSON

    def __init__(self, run: _Run) -> None:
        super().__init__(media_type=NDJSON)
        self.run = run
        self.disconnected = False

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async with anyio.create_task_group() as group:
            group.start_soon(self._watch, receive, group.cancel_scope)
            await self._stream(send)
            group.cancel_scope.cancel()
        if self.disconnected:
            self.run.finish("the client disconnected before the answer was complete")

    async def _watch(self, receive: Receive, scope: CancelScope) -> None:
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                self.disconnected = True
                scope.cancel()
                return

    async def _stream(self, send: Send) -> None:
        started = False

        async def start(status: int) -> None:
            nonlocal started
            headers = [(b"content-type", NDJSON.encode())]
            await send({"type": "http.response.start", "status": status, "headers": headers})
            started = True

        async def line(data: dict[str, Any]) -> None:
            body = json.dumps(data, ensure_ascii=False).encode() + b"\n"
            await send({"type": "http.response.body", "body": body, "more_body": True})

        try:
            async with aclosing(self.run.lines()) as lines:
                async for data in lines:
                    if not started:
                        await start(200)
                    await line(data)
        except Exception as exc:
            status, body = self.run.error_body(exc)
            if not started:
                payload = json.dumps(body).encode()
                headers = [(b"content-type", b"application/json")]
                await send({"type": "http.response.start", "status": status, "headers": headers})
                await send({"type": "http.response.body", "body": payload})
                return
            with suppress(OSError):  # the client may be gone already
                await line(body)
        except BaseException:
            if not self.disconnected:
                self.run.finish("the request was cancelled")
            raise
        if not started:
            await start(200)
        await send({"type": "http.response.body", "body": b"", "more_body": False})


# GET /api/tags


async def tags(request: Request) -> Response:
    config = _state(request).config
    models = config.runtime.models or [config.model(None)]
    modified = config.source.stat().st_mtime if config.source is not None else time.time()
    return JSONResponse({"models": [_tag(model, modified) for model in models]})


def _tag(model: ModelConfig, modified: float) -> dict[str, Any]:
    digest = hashlib.sha256(model.model_dump_json().encode()).hexdigest()
    family = model.provider
    return {
        "name": model.name,
        "model": model.name,
        "modified_at": iso_time(modified),
        "size": 0,
        "digest": digest,
        "details": {
            "parent_model": model.model or "",
            "format": "gguf" if model.provider == "llamacpp" else model.provider,
            "family": family,
            "families": [family],
            "parameter_size": "",
            "quantization_level": "",
        },
    }


# GET /api/tools, POST /api/tools/search


class _SearchBody(_Wire):
    pattern: str = "*"
    mcp_servers: list[Any] | None = None
    model: str | None = None
    context: str = ""
    limit: int | None = Field(default=None, ge=1)


async def list_tools(request: Request) -> Response:
    state = _state(request)
    try:
        servers = admit_servers(state, _configured(state, request.query_params.get("model")))
        tools, problems = await search(state, servers, "*")
    except Exception as exc:
        return error_response(exc, "ollama")
    return JSONResponse(tools_body(tools, problems))


async def search_tools(request: Request) -> Response:
    state = _state(request)
    try:
        body: _SearchBody = parse_body(await json_body(request), _SearchBody)
        requested = parse_mcp_servers(body.mcp_servers)
        servers = admit_servers(state, _configured(state, body.model), requested)
        tools, problems = await search(state, servers, body.pattern, body.context)
    except Exception as exc:
        return error_response(exc, "ollama")
    total = len(tools)
    shown = tools[: body.limit] if body.limit else tools
    return JSONResponse({**tools_body(shown, problems), "pattern": body.pattern, "total": total})


def _configured(state: ServerState, model_name: str | None) -> list[McpServerConfig]:
    if model_name:
        return state.config.servers_for(_model(state, model_name))
    return list(state.config.mcp.servers)


def tools_body(tools: list[ToolDefinition], problems: str) -> dict[str, Any]:
    """Ollama's tool search answer: {tools: [{server, name, description, parameters}], total}."""
    body: dict[str, Any] = {
        "tools": [
            {
                "server": tool.name.split(SEPARATOR, 1)[0],
                "name": tool.name,
                "description": tool.description,
                "parameters": tool.parameters,
            }
            for tool in tools
        ],
        "total": len(tools),
    }
    if problems:
        body["errors"] = problems
    return body


async def search(
    state: ServerState, servers: ChatServers, pattern: str, context: str = ""
) -> tuple[list[ToolDefinition], str]:
    """Tools of the admitted `servers` matching `pattern`, most relevant first, each
    server a pooled session."""
    settings = ToolSettings(tool_timeout=state.config.runtime.tool_timeout)
    opener = server_toolsets(state, servers, settings)
    sources = [opener.source(s) for s in servers.all]
    if not sources:
        return [], ""
    async with DiscoveryToolset(sources) as discovery:
        return await discovery.search(pattern, context)


# GET /api/tasks/{id}


async def get_task(request: Request) -> Response:
    task_id = request.path_params["task_id"]
    task = _state(request).task_store().get(task_id)
    if task is None:
        return error_response(
            RequestError(f"task {task_id!r} not found; task ids come from /api/chat", status=404),
            "ollama",
        )
    return JSONResponse(task.to_json())


# GET /api/version


async def version(_: Request) -> Response:
    try:
        number = importlib.metadata.version("farmhand")
    except importlib.metadata.PackageNotFoundError:
        number = "0.0.0"
    return JSONResponse({"version": number})
