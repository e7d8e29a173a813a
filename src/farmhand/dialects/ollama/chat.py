"""An Ollama `/api/chat` body, checked and turned into a ChatRequest.

Field names and defaults follow Ollama's MCP API: `stream` true, `max_tool_rounds` 15,
`tool_timeout` 30000 ms, `include_tool_results` false, `jit_tools` true, `jit_max_tools` 5,
`jit_connect_eager` as the config's `runtime:` says (false unless set), and an optional
`task_id`. Ollama's own `options`, `format`,
`think` and `keep_alive` are read as `ollama_options.py` says; `images` are refused (no
model farmhand runs has vision).

The final message lists the MCP calls farmhand ran in `message.tool_calls`, as the Ollama
MCP fork does, but only for a client that offered no tools of its own (`tools`): one that
did runs a loop over `tool_calls` (Ollama's meaning: "run these"), so it gets only the calls
it must run. Each call that ran is marked `"executed": true`. When such a message comes back
in a later request's history, its calls that no tool message answers are records of calls
that ran, not requests: they are left out of what the model sees (`drop_executed_calls`).
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Callable, Sequence
from typing import Any, Literal

from pydantic import Field

from farmhand.dialects.fields import LARGEST_INTEGER, LARGEST_TIMEOUT_MS
from farmhand.dialects.ollama.common import (
    OllamaBody,
    Options,
    keep_alive_seconds,
    refuse_images,
    response_format,
    think_flag,
)
from farmhand.errors import ConfigError, RequestError
from farmhand.generation.template_kwargs import request_template_kwargs
from farmhand.messages import Message, ToolCall, new_call_id
from farmhand.runtime.events import LoopFinished
from farmhand.service.chat import ChatRequest
from farmhand.service.mcp_servers import parse_mcp_servers
from farmhand.service.tasks import MAX_TASK_ID_LENGTH, iso_time
from farmhand.tools.definition import SEPARATOR
from farmhand.tools.formats.detect import to_openai_tools

DEFAULT_MAX_TOOL_ROUNDS = 15
DEFAULT_TOOL_TIMEOUT_MS = 30000


class _Function(OllamaBody):
    name: str = Field(min_length=1)
    arguments: dict[str, Any] | str = Field(default_factory=dict)


class _ToolCall(OllamaBody):
    id: str | None = None
    function: _Function
    executed: bool = False
    """farmhand's mark on a call it ran (a final message's record, sent back)."""


class _Message(OllamaBody):
    role: Literal["system", "user", "assistant", "tool"]
    content: str | None = ""
    thinking: str | None = None
    tool_calls: list[_ToolCall] | None = None
    tool_name: str | None = None
    name: str | None = None
    tool_call_id: str | None = None
    images: list[Any] | None = None


class ChatBody(OllamaBody):
    """The fields of `POST /api/chat` farmhand reads."""

    model: str = ""
    messages: list[_Message] = Field(default_factory=list)
    tools: list[dict[str, Any]] | None = None
    stream: bool = True
    options: Options | None = None
    format: Any = None
    think: Any = None
    chat_template: Any = None  # refused: see generation/template_kwargs.py
    chat_template_kwargs: Any = None
    keep_alive: Any = None
    mcp_servers: list[Any] | None = None
    max_tool_rounds: int = Field(default=DEFAULT_MAX_TOOL_ROUNDS, ge=1, le=LARGEST_INTEGER)
    tool_timeout: int = Field(default=DEFAULT_TOOL_TIMEOUT_MS, gt=0, le=LARGEST_TIMEOUT_MS)
    include_tool_results: bool = False
    jit_tools: bool = True
    jit_max_tools: int = Field(default=5, ge=1, le=LARGEST_INTEGER)
    jit_connect_eager: bool | None = None
    task_id: str | None = Field(default=None, min_length=1, max_length=MAX_TASK_ID_LENGTH)

    def keep_alive_seconds(self) -> float | None:
        return keep_alive_seconds(self.keep_alive)


def chat_request(body: ChatBody) -> ChatRequest:
    """The ChatRequest for a checked body; RequestError for what the types cannot say."""
    if not body.model:
        raise RequestError("model is required; GET /api/tags lists the models", param="model")
    if not body.messages:  # the route answers a chat without messages: it loads the model
        raise RequestError("messages must hold at least one message", param="messages")
    for i, message in enumerate(body.messages):
        refuse_images(message.images, body.model, f"messages[{i}].images")
    body.keep_alive_seconds()  # checked now, applied when the chat ends
    servers = parse_mcp_servers(body.mcp_servers)
    try:
        tools = to_openai_tools(body.tools or [])
    except ConfigError as exc:
        raise RequestError(f"tools: {exc}", param="tools") from None
    return ChatRequest(
        model=body.model,
        messages=drop_executed_calls(body.messages, {t.name for t in tools}),
        settings=(body.options or Options()).settings(
            response_format=response_format(body.format),
            think=think_flag(body.think),
            stream=body.stream,
            template_kwargs=request_template_kwargs(body.chat_template, body.chat_template_kwargs),
        ),
        client_tools=tools,
        mcp_servers=servers,
        max_tool_rounds=body.max_tool_rounds,
        tool_timeout=body.tool_timeout / 1000,
        jit_tools=body.jit_tools,
        jit_max_tools=body.jit_max_tools,
        jit_connect_eager=body.jit_connect_eager,
    )


def to_messages(items: list[_Message]) -> list[Message]:
    """Ollama's messages as farmhand's. Ollama's tool calls carry no ids, so a tool message
    answers the earliest unanswered call of the same name (`tool_name`), else the earliest
    unanswered call."""
    messages: list[Message] = []
    unanswered: list[ToolCall] = []
    for i, item in enumerate(items):
        content = item.content or ""
        if item.role == "assistant":
            calls = tuple(
                ToolCall(
                    call.function.name,
                    _arguments(call.function.arguments, f"messages[{i}].tool_calls[{j}]"),
                    id=call.id or new_call_id(),
                )
                for j, call in enumerate(item.tool_calls or [])
            )
            unanswered = list(calls)
            messages.append(
                Message("assistant", content, reasoning=item.thinking or None, tool_calls=calls)
            )
        elif item.role == "tool":
            name = item.tool_name or item.name
            answered = _answered(unanswered, item.tool_call_id, name)
            if answered is not None:
                unanswered.remove(answered)
            messages.append(
                Message(
                    "tool",
                    content,
                    tool_call_id=answered.id if answered else (item.tool_call_id or new_call_id()),
                    name=name or (answered.name if answered else "tool"),
                )
            )
        else:
            messages.append(Message(item.role, content))
    return messages


def drop_executed_calls(items: list[_Message], client_tools: set[str]) -> list[Message]:
    """`to_messages`, less the calls farmhand already ran: those a final message listed
    (marked `executed`, or, from a client that drops the mark, an MCP `server:tool` call
    that is not one of the client's tools) and that no tool message answers. The model sees
    its answer after them, not a call that seems never to have run."""
    messages = to_messages(items)  # one message per item
    kept: list[Message] = []
    for i, (item, message) in enumerate(zip(items, messages, strict=True)):
        ran = {
            j
            for j, call in enumerate(item.tool_calls or [])
            if call.executed
            or (SEPARATOR in call.function.name and call.function.name not in client_tools)
        }
        if ran:
            answered = {m.tool_call_id for m in _results_after(messages, i)}
            calls = tuple(
                c for j, c in enumerate(message.tool_calls) if j not in ran or c.id in answered
            )
            message = dataclasses.replace(message, tool_calls=calls)
        kept.append(message)  # even when left empty: some templates need turns to alternate
    return kept


def _results_after(messages: list[Message], index: int) -> list[Message]:
    """The tool messages right after messages[index]."""
    results = []
    for message in messages[index + 1 :]:
        if message.role != "tool":
            break
        results.append(message)
    return results


def _answered(calls: list[ToolCall], call_id: str | None, name: str | None) -> ToolCall | None:
    for call in calls:
        if call_id is not None and call.id == call_id:
            return call
    for call in calls:
        if name is not None and call.name == name:
            return call
    return calls[0] if calls and call_id is None and name is None else None


def _arguments(value: dict[str, Any] | str, where: str) -> dict[str, Any]:
    if isinstance(value, dict):
        return value
    try:
        parsed = json.loads(value) if value.strip() else {}
    except json.JSONDecodeError:
        parsed = None
    if not isinstance(parsed, dict):
        raise RequestError(
            f"{where}.function.arguments must be a JSON object, got {value[:80]!r}",
            param="messages",
        )
    return parsed


class ToolSearchBody(OllamaBody):
    """`POST /api/tools/search`: a pattern, and the model or servers to search."""

    pattern: str = "*"
    mcp_servers: list[Any] | None = None
    model: str | None = None
    context: str = ""
    limit: int | None = Field(default=None, ge=1)


def loaded_line(model: str, reason: str) -> dict[str, Any]:
    """The answer to a chat without messages: the model is loaded ("load") or, with
    `keep_alive: 0`, unloaded ("unload"), as Ollama answers it."""
    return {
        "model": model,
        "created_at": iso_time(time.time()),
        "message": {"role": "assistant", "content": ""},
        "done_reason": reason,
        "done": True,
    }


DONE_REASONS = {"stop": "stop", "length": "length", "client_tool_calls": "stop"}


class ChatLines:
    """Ollama's `/api/chat` objects for one chat: a line per piece of text or reasoning,
    then the final one with Ollama's timings (counted from this object's making, the
    request's start). `task` gives the fields every object carries (its task's id and
    status), read as each object is rendered."""

    def __init__(self, body: ChatBody, task: Callable[[], dict[str, Any]]) -> None:
        self.body = body
        self.task = task
        self.started = time.perf_counter_ns()
        self.first_token: int | None = None

    def text(self, text: str) -> dict[str, Any]:
        self.mark_first_token()
        return self._line({"content": text})

    def thinking(self, text: str) -> dict[str, Any]:
        return self._line({"content": "", "thinking": text})

    def calls(self, calls: Sequence[ToolCall]) -> dict[str, Any]:
        """The calls the client runs itself, on a line of their own (streamed)."""
        return self._line({"content": "", "tool_calls": _ollama_calls(calls)})

    def mark_first_token(self) -> None:
        if self.first_token is None:
            self.first_token = time.perf_counter_ns()

    def _line(self, message: dict[str, Any]) -> dict[str, Any]:
        return {
            "model": self.body.model,
            "created_at": iso_time(time.time()),
            "message": {"role": "assistant", **message},
            "done": False,
            **self.task(),
        }

    def final(self, finished: LoopFinished, content: str, thinking: str = "") -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": content}
        if thinking:
            message["thinking"] = thinking
        if calls := self._final_calls(finished):
            message["tool_calls"] = calls
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
        return {**response, **self.task()}

    def _final_calls(self, finished: LoopFinished) -> list[dict[str, Any]]:
        """The calls the client must run (streamed on a line of their own), else, for a
        client with no tools of its own, the MCP calls that ran, marked `executed`."""
        if finished.pending_calls:
            return [] if self.body.stream else _ollama_calls(finished.pending_calls)
        if self.body.tools:
            return []
        ran = [r.call for r in finished.tool_calls if SEPARATOR in r.call.name]
        return [{**call, "executed": True} for call in _ollama_calls(ran)]


def _ollama_calls(calls: Sequence[ToolCall]) -> list[dict[str, Any]]:
    return [{"function": {"name": c.name, "arguments": c.arguments}} for c in calls]
