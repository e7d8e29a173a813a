"""OpenAI Chat Completions responses: the `chat.completion` object, and the
`chat.completion.chunk` objects of a stream, rendered from the loop's events.

Calls to the request's own `tools` come back exactly as OpenAI returns them (finish_reason
"tool_calls", `message.tool_calls` / streamed `delta.tool_calls`, id and name in the first
delta, then argument text). Calls farmhand runs itself (MCP tools) are not OpenAI's
business: while streaming, each is reported in a chunk with an empty delta and a `farmhand`
field (`{"type": "tool_call", ...}`, then `{"type": "tool_result", ...}`), which the
`openai` SDK keeps as an extra attribute; `include_tool_results` adds `tool_results`.
"""

from __future__ import annotations

import secrets
import time
from typing import Any

from farmhand.dialects.openai.chat import OpenAIChat
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

FINISH_REASONS: dict[StopReason, str] = {
    "stop": "stop",
    "length": "length",
    "round_limit": "stop",
    "client_tool_calls": "tool_calls",
}


def completion_id() -> str:
    return "chatcmpl-" + secrets.token_hex(12)


def completion_body(parsed: OpenAIChat, done: LoopFinished, reasoning: str) -> dict[str, Any]:
    """The `chat.completion` object for a finished chat."""
    message: dict[str, Any] = {"role": "assistant", "content": done.answer}
    if done.pending_calls:
        message["tool_calls"] = [openai_call(call) for call in done.pending_calls]
        message["content"] = done.answer or None
    if reasoning:
        message["reasoning_content"] = reasoning
    body: dict[str, Any] = {
        "id": completion_id(),
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
        "usage": usage(done),
        "farmhand": {"stop_reason": done.stop_reason, "rounds": done.rounds},
    }
    if parsed.include_tool_results:
        body["tool_results"] = tool_results(done)
    return body


def openai_call(call: ToolCall, index: int | None = None) -> dict[str, Any]:
    rendered: dict[str, Any] = {
        "id": call.id,
        "type": "function",
        "function": {"name": call.name, "arguments": call.arguments_json()},
    }
    return rendered if index is None else {"index": index, **rendered}


def usage(done: LoopFinished) -> dict[str, int]:
    return {
        "prompt_tokens": done.usage.prompt_tokens,
        "completion_tokens": done.usage.completion_tokens,
        "total_tokens": done.usage.total_tokens,
    }


def tool_results(done: LoopFinished) -> list[dict[str, Any]]:
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


class ChunkRenderer:
    """The chunks of one streamed completion, event by event (`opening()` first)."""

    def __init__(self, parsed: OpenAIChat) -> None:
        self.parsed = parsed
        self.id = completion_id()
        self.created = int(time.time())
        # Client tool calls streamed as they are written: (turn, index in turn) -> the
        # index in this message's tool_calls; their ids, so the finish does not repeat them.
        self._turn = 0
        self._call_index: dict[tuple[int, int], int] = {}
        self._streamed_ids: set[str] = set()

    def opening(self) -> dict[str, Any]:
        return self.chunk({"role": "assistant", "content": ""})

    def render(self, event: LoopEvent) -> list[dict[str, Any]]:
        if isinstance(event, TurnStarted):
            self._turn = event.round
            return []
        if isinstance(event, ToolCallWriting):
            return [self.chunk({"tool_calls": [d]})] if (d := self._call_delta(event)) else []
        if isinstance(event, TextChunk):
            return [self.chunk({"content": event.text})]
        if isinstance(event, ReasoningChunk):
            return [self.chunk({"reasoning_content": event.text})]
        if isinstance(event, ToolCallStarted):
            call = event.call
            info = {"type": "tool_call", "id": call.id, "name": call.name}
            return [self.chunk({}, farmhand={**info, "arguments": call.arguments})]
        if isinstance(event, ToolCallFinished):
            result = event.result
            info = {"type": "tool_result", "tool_call_id": result.call_id, "name": result.name}
            extra = {"content": result.content, "is_error": result.is_error}
            return [self.chunk({}, farmhand={**info, **extra})]
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
            calls = [openai_call(call, first + i) for i, call in enumerate(unsent)]
            chunks.append(self.chunk({"tool_calls": calls}))
        extra: dict[str, Any] = {
            "farmhand": {"stop_reason": done.stop_reason, "rounds": done.rounds}
        }
        if self.parsed.include_tool_results:
            extra["tool_results"] = tool_results(done)
        chunks.append(self.chunk({}, FINISH_REASONS[done.stop_reason], **extra))
        if self.parsed.include_usage:
            chunks.append({**self.chunk({}), "choices": [], "usage": usage(done)})
        return chunks

    def chunk(
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
