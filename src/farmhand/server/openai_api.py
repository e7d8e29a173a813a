"""The OpenAI dialect: `POST /v1/chat/completions` (SSE streaming and not), `GET /v1/models`.

Calls to the request's own `tools` come back exactly as OpenAI returns them (finish_reason
"tool_calls", `message.tool_calls` / streamed `delta.tool_calls`). Calls farmhand runs
itself (MCP tools) are not OpenAI's business: while streaming, each is reported as it
happens in a chunk with an empty delta and a `farmhand` field (`{"type": "tool_call", ...}`,
then `{"type": "tool_result", ...}`), which the `openai` SDK keeps as an extra attribute;
`include_tool_results` adds `tool_results` to the response (or to the last chunk).
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import aclosing
from typing import Any

import anyio
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route
from starlette.types import Receive, Scope, Send

from farmhand.errors import FarmhandError
from farmhand.messages import ToolCall
from farmhand.runtime.events import (
    LoopEvent,
    LoopFinished,
    ReasoningChunk,
    StopReason,
    TextChunk,
    ToolCallFinished,
    ToolCallStarted,
    ToolCallWriting,
    TurnStarted,
)
from farmhand.server.chat import run_chat
from farmhand.server.errors import UnknownModelError, api_error, error_response, openai_body
from farmhand.server.json_body import json_object
from farmhand.server.openai_request import OpenAIChat, parse_chat
from farmhand.server.state import ServerState

FINISH_REASONS: dict[StopReason, str] = {
    "stop": "stop",
    "length": "length",
    "round_limit": "stop",
    "client_tool_calls": "tool_calls",
}


def routes() -> list[BaseRoute]:
    return [
        Route("/v1/chat/completions", chat_completions, methods=["POST"]),
        Route("/v1/models", list_models, methods=["GET"]),
        Route("/v1/models/{model:path}", get_model, methods=["GET"]),
    ]


def _state(request: Request) -> ServerState:
    state: ServerState = request.app.state.farmhand
    return state


async def list_models(request: Request) -> Response:
    names = _state(request).model_names()
    return JSONResponse({"object": "list", "data": [_model(n) for n in names]})


async def get_model(request: Request) -> Response:
    names = _state(request).model_names()
    name = request.path_params["model"]
    if name not in names:
        known = ", ".join(names)
        return error_response(
            UnknownModelError(f"unknown model {name!r}; available models: {known}")
        )
    return JSONResponse(_model(name))


def _model(name: str) -> dict[str, Any]:
    return {"id": name, "object": "model", "created": 0, "owned_by": "farmhand"}


async def chat_completions(request: Request) -> Response:
    state = _state(request)
    try:
        parsed = parse_chat(await json_object(request))
    except FarmhandError as exc:
        return error_response(exc)
    if parsed.stream:
        return _StreamResponse(state, parsed)
    try:
        events = run_chat(state, parsed.chat)
        async with aclosing(events):
            reasoning: list[str] = []
            async for event in events:
                if isinstance(event, ReasoningChunk):
                    reasoning.append(event.text)
                elif isinstance(event, LoopFinished):
                    return JSONResponse(_completion(parsed, event, "".join(reasoning)))
    except FarmhandError as exc:
        return error_response(exc)
    raise AssertionError("run_chat ended without LoopFinished")


def _completion(parsed: OpenAIChat, done: LoopFinished, reasoning: str) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": done.answer}
    if done.pending_calls:
        message["tool_calls"] = [_call(call) for call in done.pending_calls]
        message["content"] = done.answer or None
    if reasoning:
        message["reasoning_content"] = reasoning
    body: dict[str, Any] = {
        "id": _completion_id(),
        "object": "chat.completion",
        "created": int(time.time()),
        "model": parsed.model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": FINISH_REASONS[done.stop_reason],
                "logprobs": None,
            }
        ],
        "usage": _usage(done),
        "farmhand": {"stop_reason": done.stop_reason, "rounds": done.rounds},
    }
    if parsed.include_tool_results:
        body["tool_results"] = _tool_results(done)
    return body


def _call(call: ToolCall, index: int | None = None) -> dict[str, Any]:
    rendered: dict[str, Any] = {
        "id": call.id,
        "type": "function",
        "function": {"name": call.name, "arguments": call.arguments_json()},
    }
    return rendered if index is None else {"index": index, **rendered}


def _usage(done: LoopFinished) -> dict[str, int]:
    return {
        "prompt_tokens": done.usage.prompt_tokens,
        "completion_tokens": done.usage.completion_tokens,
        "total_tokens": done.usage.total_tokens,
    }


def _tool_results(done: LoopFinished) -> list[dict[str, Any]]:
    return [
        {
            "tool_call_id": record.call.id,
            "name": record.call.name,
            "arguments": record.call.arguments,
            "content": record.result.content,
            "is_error": record.result.is_error,
        }
        for record in done.tool_calls
    ]


def _completion_id() -> str:
    return "chatcmpl-" + uuid.uuid4().hex[:24]


class _StreamResponse(Response):
    """SSE of chat.completion.chunk objects, ending with `data: [DONE]`.

    Runs the whole chat in the task that serves the response (the loop's cancel scopes stay
    in one task), starts the stream only after the chat got going (an unknown model or a
    refused server is still an ordinary 4xx), and stops the loop if the client goes away.
    """

    def __init__(self, state: ServerState, parsed: OpenAIChat) -> None:
        super().__init__()
        self.state = state
        self.parsed = parsed
        self.id = _completion_id()
        self.created = int(time.time())
        # Client tool calls streamed as they are written: (turn, index in turn) -> the
        # index in this message's tool_calls; their ids, so the finish does not repeat them.
        self._turn = 0
        self._call_index: dict[tuple[int, int], int] = {}
        self._streamed_ids: set[str] = set()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        events = run_chat(self.state, self.parsed.chat)
        async with aclosing(events):
            try:
                first = await anext(events)
            except FarmhandError as exc:
                await error_response(exc)(scope, receive, send)
                return
            await send(
                {
                    "type": "http.response.start",
                    "status": 200,
                    "headers": [
                        (b"content-type", b"text/event-stream; charset=utf-8"),
                        (b"cache-control", b"no-cache"),
                        (b"x-accel-buffering", b"no"),
                    ],
                }
            )
            async with anyio.create_task_group() as group:

                async def watch() -> None:
                    while (await receive())["type"] != "http.disconnect":
                        pass
                    group.cancel_scope.cancel()

                group.start_soon(watch)
                await self._stream(first, events, send)
                group.cancel_scope.cancel()

    async def _stream(self, first: LoopEvent, events: AsyncIterator[LoopEvent], send: Send) -> None:
        async def emit(data: dict[str, Any] | str) -> None:
            text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
            body = f"data: {text}\n\n".encode()
            await send({"type": "http.response.body", "body": body, "more_body": True})

        await emit(self._chunk({"role": "assistant", "content": ""}))
        try:
            event: LoopEvent | None = first
            while event is not None:
                for data in self._render(event):
                    await emit(data)
                event = await anext(events, None)
        except Exception as exc:  # the stream has begun: report it in the stream
            await emit(openai_body(api_error(exc)))
        await emit("[DONE]")
        await send({"type": "http.response.body", "body": b"", "more_body": False})

    def _render(self, event: LoopEvent) -> list[dict[str, Any]]:
        if isinstance(event, TurnStarted):
            self._turn = event.round
            return []
        if isinstance(event, ToolCallWriting):
            return [self._chunk({"tool_calls": [d]})] if (d := self._call_delta(event)) else []
        if isinstance(event, TextChunk):
            return [self._chunk({"content": event.text})]
        if isinstance(event, ReasoningChunk):
            return [self._chunk({"reasoning_content": event.text})]
        if isinstance(event, ToolCallStarted):
            call = event.call
            info = {"type": "tool_call", "id": call.id, "name": call.name}
            return [self._chunk({}, farmhand={**info, "arguments": call.arguments})]
        if isinstance(event, ToolCallFinished):
            result = event.result
            info = {"type": "tool_result", "tool_call_id": result.call_id, "name": result.name}
            extra = {"content": result.content, "is_error": result.is_error}
            return [self._chunk({}, farmhand={**info, **extra})]
        if isinstance(event, LoopFinished):
            return self._finish(event)
        return []

    def _call_delta(self, event: ToolCallWriting) -> dict[str, Any] | None:
        """OpenAI's streamed tool call: index, id, type and name first, then arguments."""
        if not event.for_client:
            return None  # farmhand runs it; reported by the `farmhand` tool_call chunks
        key = (self._turn, event.index)
        if key not in self._call_index:
            self._call_index[key] = len(self._call_index)
            self._streamed_ids.add(event.id)
            function = {"name": event.name, "arguments": event.arguments}
            return {
                "index": self._call_index[key],
                "id": event.id,
                "type": "function",
                "function": function,
            }
        return {"index": self._call_index[key], "function": {"arguments": event.arguments}}

    def _finish(self, done: LoopFinished) -> list[dict[str, Any]]:
        chunks = []
        unsent = [c for c in done.pending_calls if c.id not in self._streamed_ids]
        if unsent:  # calls whose provider gave no deltas: whole, after the streamed ones
            first = len(self._call_index)
            calls = [_call(call, first + i) for i, call in enumerate(unsent)]
            chunks.append(self._chunk({"tool_calls": calls}))
        extra: dict[str, Any] = {
            "farmhand": {"stop_reason": done.stop_reason, "rounds": done.rounds}
        }
        if self.parsed.include_tool_results:
            extra["tool_results"] = _tool_results(done)
        chunks.append(self._chunk({}, FINISH_REASONS[done.stop_reason], **extra))
        if self.parsed.include_usage:
            chunks.append({**self._chunk({}), "choices": [], "usage": _usage(done)})
        return chunks

    def _chunk(
        self, delta: dict[str, Any], finish_reason: str | None = None, **extra: Any
    ) -> dict[str, Any]:
        return {
            "id": self.id,
            "object": "chat.completion.chunk",
            "created": self.created,
            "model": self.parsed.model,
            "choices": [
                {"index": 0, "delta": delta, "finish_reason": finish_reason, "logprobs": None}
            ],
            **extra,
        }
