"""An Ollama `/api/chat` body, checked and turned into a ChatRequest.

Field names and defaults follow Ollama's MCP API: `stream` true, `max_tool_rounds` 15,
`tool_timeout` 30000 ms, `include_tool_results` false, `jit_tools` true, `jit_max_tools` 5,
`jit_connect_eager` false, and an optional `task_id`. Fields Ollama clients send that
farmhand has no use for (`format`, `keep_alive`, `think`, images) are accepted and ignored.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from farmhand.config.models import format_path
from farmhand.errors import ConfigError, RequestError
from farmhand.messages import Message, ToolCall, new_call_id
from farmhand.providers.base import GenerationSettings
from farmhand.service.chat import ChatRequest
from farmhand.service.mcp_servers import parse_mcp_servers
from farmhand.service.tasks import MAX_TASK_ID_LENGTH
from farmhand.tools.formats.detect import to_openai_tools

DEFAULT_MAX_TOOL_ROUNDS = 15
DEFAULT_TOOL_TIMEOUT_MS = 30000


class OllamaBody(BaseModel):
    # strict: `"stream": "yes"` is a mistake to report, not a value to guess at.
    model_config = ConfigDict(extra="ignore", strict=True)


class _Function(OllamaBody):
    name: str = Field(min_length=1)
    arguments: dict[str, Any] | str = Field(default_factory=dict)


class _ToolCall(OllamaBody):
    id: str | None = None
    function: _Function


class _Message(OllamaBody):
    role: Literal["system", "user", "assistant", "tool"]
    content: str | None = ""
    thinking: str | None = None
    tool_calls: list[_ToolCall] | None = None
    tool_name: str | None = None
    name: str | None = None
    tool_call_id: str | None = None


class _Options(OllamaBody):
    temperature: float | None = Field(default=None, ge=0)
    num_predict: int | None = None
    seed: int | None = None
    stop: list[str] | None = None


class ChatBody(OllamaBody):
    """The fields of `POST /api/chat` farmhand reads."""

    model: str = ""
    messages: list[_Message] = []
    tools: list[dict[str, Any]] | None = None
    stream: bool = True
    options: _Options | None = None
    mcp_servers: list[Any] | None = None
    max_tool_rounds: int = Field(default=DEFAULT_MAX_TOOL_ROUNDS, ge=1)
    tool_timeout: int = Field(default=DEFAULT_TOOL_TIMEOUT_MS, gt=0)
    include_tool_results: bool = False
    jit_tools: bool = True
    jit_max_tools: int = Field(default=5, ge=1)
    jit_connect_eager: bool = False
    task_id: str | None = Field(default=None, min_length=1, max_length=MAX_TASK_ID_LENGTH)


def parse_body(data: object, model_cls: type[OllamaBody]) -> Any:
    """`data` validated as `model_cls`; RequestError (400) naming each wrong field."""
    if not isinstance(data, dict):
        raise RequestError("the request body must be a JSON object")
    try:
        return model_cls.model_validate(data)
    except ValidationError as exc:
        problems = [
            f"{format_path(tuple(error['loc'])) or 'body'}: {error['msg']}"
            for error in exc.errors()
        ]
        first = exc.errors()[0]["loc"]
        raise RequestError("; ".join(problems), param=str(first[0]) if first else None) from None


def chat_request(body: ChatBody) -> ChatRequest:
    """The ChatRequest for a checked body; RequestError for what the types cannot say."""
    if not body.model:
        raise RequestError("model is required; GET /api/tags lists the models", param="model")
    if not body.messages:
        raise RequestError("messages must hold at least one message", param="messages")
    servers = parse_mcp_servers(body.mcp_servers)
    try:
        tools = to_openai_tools(body.tools or [])
    except ConfigError as exc:
        raise RequestError(f"tools: {exc}", param="tools") from None
    return ChatRequest(
        model=body.model,
        messages=to_messages(body.messages),
        settings=dataclasses.replace(_settings(body.options), stream=body.stream),
        client_tools=tools,
        mcp_servers=servers,
        max_tool_rounds=body.max_tool_rounds,
        tool_timeout=body.tool_timeout / 1000,
        jit_tools=body.jit_tools,
        jit_max_tools=body.jit_max_tools,
        jit_connect_eager=body.jit_connect_eager,
    )


def _settings(options: _Options | None) -> GenerationSettings:
    if options is None:
        return GenerationSettings()
    num_predict = options.num_predict
    return GenerationSettings(
        temperature=options.temperature,
        # Ollama: -1 is "no limit", -2 "fill the context".
        max_tokens=num_predict if num_predict is not None and num_predict > 0 else None,
        seed=options.seed,
        stop=tuple(options.stop or ()),
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
