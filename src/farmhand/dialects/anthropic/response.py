"""Anthropic Messages responses, rendered from the loop's events: the stream's named events
(`message_start`, `content_block_start` / `_delta` / `_stop`, `message_delta`,
`message_stop`) and, from the same renderer, the `message` object of a non-streamed reply.

Content blocks, in the order the model wrote them:

    thinking   the model's reasoning (thinking_delta); signature is empty: nothing signs it
    text       its answer (text_delta)
    tool_use   a call of one of the request's own `tools` (input_json_delta); the reply then
               stops with stop_reason "tool_use" and the client runs it
    mcp_tool_use / mcp_tool_result   a call farmhand ran itself on an MCP server (the MCP
               connector's blocks; `server_name` is the server, `name` the tool's own name)

stop_reason: end_turn, max_tokens, tool_use, or stop_sequence (with `stop_sequence` naming
it) when one of the request's `stop_sequences` ended the turn. Only the embedded model's
provider can tell that (it cuts the text itself: `Finish.stop_sequence`). Behind the
OpenAI-compatible provider a reply says end_turn: OpenAI's shape has finish_reason "stop"
both for a stop string and for the model's own end of turn, llama-server's chat endpoint
adds nothing to it, and the stop string is left out of the text, so no guess from the text
is possible either. (vLLM alone adds a `stop_reason` field naming the string, which the
provider does not read.)
"""

from __future__ import annotations

import json
import secrets
from typing import Any

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
from farmhand.tools.definition import SEPARATOR

STOP_REASONS: dict[StopReason, str] = {
    "stop": "end_turn",
    "length": "max_tokens",
    "round_limit": "end_turn",
    "client_tool_calls": "tool_use",
}
FARMHAND_SERVER = "farmhand"  # server_name of farmhand's own tools (tool discovery)

Event = tuple[str, dict[str, Any]]
"""A stream event: its name and its data (the data's `type` is the name too)."""


def message_id() -> str:
    return "msg_" + secrets.token_hex(12)


def usage(done: LoopFinished | None) -> dict[str, int]:
    if done is None:
        return {"input_tokens": 0, "output_tokens": 0}
    return {"input_tokens": done.usage.prompt_tokens, "output_tokens": done.usage.completion_tokens}


class MessageRenderer:
    """The events of one reply, event by event (`opening()` first), and the reply as one
    `message` object (`message()`, after LoopFinished)."""

    def __init__(self, model: str) -> None:
        self.model = model
        self.id = message_id()
        self.content: list[dict[str, Any]] = []
        self.open: int | None = None  # index of the block being written
        self.open_call: tuple[int, int] | None = None  # (turn, index) of an open tool_use
        self.turn = 0
        self.streamed_ids: set[str] = set()
        self.done: LoopFinished | None = None

    def opening(self) -> Event:
        start = {**self._envelope(), "content": [], "stop_reason": None, "stop_sequence": None}
        return "message_start", {"type": "message_start", "message": start}

    def message(self) -> dict[str, Any]:
        """The whole reply (non-streamed)."""
        done = self.done
        return {
            **self._envelope(),
            "content": self.content,
            **stop_fields(done),
        }

    def _envelope(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "type": "message",
            "role": "assistant",
            "model": self.model,
            "usage": usage(self.done),
        }

    def render(self, event: LoopEvent) -> list[Event]:
        if isinstance(event, TurnStarted):
            self.turn = event.round
            return []
        if isinstance(event, TextChunk):
            return self._append("text", "text", event.text) if event.text else []
        if isinstance(event, ReasoningChunk):
            return self._append("thinking", "thinking", event.text) if event.text else []
        if isinstance(event, ToolCallWriting):
            return self._call_delta(event) if event.for_client else []
        if isinstance(event, ToolCallStarted):
            return self._whole(mcp_tool_use(event.call))
        if isinstance(event, ToolCallFinished):
            result = event.result
            block = {
                "type": "mcp_tool_result",
                "tool_use_id": result.call_id,
                "is_error": result.is_error,
                "content": [{"type": "text", "text": result.content}],
            }
            return self._whole(block)
        if isinstance(event, LoopFinished):
            return self._finish(event)
        return []

    def _append(self, kind: str, field: str, text: str) -> list[Event]:
        """Text or thinking, into the open block of that kind (or a new one)."""
        events: list[Event] = []
        if self.open is None or self.content[self.open]["type"] != kind:
            block = {"type": kind, field: ""}
            if kind == "thinking":
                block["signature"] = ""
            events += self._start(block)
        assert self.open is not None
        self.content[self.open][field] += text
        delta = {"type": f"{kind}_delta", field: text}
        events.append(_event("content_block_delta", index=self.open, delta=delta))
        return events

    def _call_delta(self, event: ToolCallWriting) -> list[Event]:
        """A client tool call as the model writes it: a tool_use block, then its input."""
        events: list[Event] = []
        key = (self.turn, event.index)
        if self.open_call != key:
            events += self._start(tool_use(event.id, event.name, {}))
            self.open_call = key
            self.streamed_ids.add(event.id)
        if event.arguments:
            delta = {"type": "input_json_delta", "partial_json": event.arguments}
            events.append(_event("content_block_delta", index=self.open, delta=delta))
        return events

    def _whole(self, block: dict[str, Any]) -> list[Event]:
        """A block sent whole: started with its content and stopped at once."""
        events = self._start(block)
        events += self._stop()
        return events

    def _start(self, block: dict[str, Any]) -> list[Event]:
        events = self._stop()
        self.content.append(block)
        self.open = len(self.content) - 1
        shown = {**block, "input": {}} if block["type"] == "tool_use" else block
        events.append(_event("content_block_start", index=self.open, content_block=dict(shown)))
        return events

    def _stop(self) -> list[Event]:
        if self.open is None:
            return []
        index, self.open, self.open_call = self.open, None, None
        return [_event("content_block_stop", index=index)]

    def _finish(self, done: LoopFinished) -> list[Event]:
        self.done = done
        events = self._stop()
        calls = {call.id: call for call in done.pending_calls}
        for block in self.content:  # the parsed input, whatever the deltas were
            if block["type"] == "tool_use" and block["id"] in calls:
                block["input"] = calls[block["id"]].arguments
        for call in done.pending_calls:
            if call.id in self.streamed_ids:
                continue  # calls whose provider gave no deltas: whole, after the streamed ones
            events += self._start(tool_use(call.id, call.name, call.arguments))
            whole = {"type": "input_json_delta", "partial_json": json.dumps(call.arguments)}
            events.append(_event("content_block_delta", index=self.open, delta=whole))
            events += self._stop()
        delta = stop_fields(done)
        events.append(_event("message_delta", delta=delta, usage=usage(done)))
        events.append(_event("message_stop"))
        return events


def stop_fields(done: LoopFinished | None) -> dict[str, Any]:
    """`stop_reason` and `stop_sequence` of a finished reply."""
    if done is None:
        return {"stop_reason": "end_turn", "stop_sequence": None}
    if done.stop_reason == "stop" and done.stop_sequence is not None:
        return {"stop_reason": "stop_sequence", "stop_sequence": done.stop_sequence}
    return {"stop_reason": STOP_REASONS[done.stop_reason], "stop_sequence": None}


def tool_use(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"type": "tool_use", "id": call_id, "name": name, "input": arguments}


def mcp_tool_use(call: ToolCall) -> dict[str, Any]:
    server, separator, name = call.name.partition(SEPARATOR)
    if not separator:
        server, name = FARMHAND_SERVER, call.name
    return {
        "type": "mcp_tool_use",
        "id": call.id,
        "name": name,
        "server_name": server,
        "input": call.arguments,
    }


def _event(kind: str, **data: Any) -> Event:
    return kind, {"type": kind, **data}
