"""An OpenAI chat.completions request body -> a ChatRequest, or a RequestError saying what
to fix (400, with `param` naming the field, as OpenAI does).

Besides OpenAI's own fields it takes farmhand's extensions: `mcp_servers`, `tools_path`,
`max_tool_rounds`, `tool_timeout` (milliseconds, as in Ollama's MCP API), `jit_tools`,
`jit_max_tools`, `jit_connect_eager`, `include_tool_results`; and llama-server's
`chat_template_kwargs` (variables for the embedded model's chat template; a request's own
`chat_template` is refused: see `generation/template_kwargs.py`).

`response_format` (`text`, `json_object`, or `json_schema` with its `name`, `schema` and
`strict`) is the answer's shape, `GenerationSettings.response_format`, as the Responses
`text.format` and Ollama's `format` are.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from farmhand.dialects.fields import LARGEST_TIMEOUT_MS, flag, integer, json_schema, number
from farmhand.dialects.strict_json import strict_loads
from farmhand.errors import ConfigError, RequestError
from farmhand.generation.settings import GenerationSettings, ResponseFormat
from farmhand.generation.template_kwargs import request_template_kwargs
from farmhand.messages import Message, ToolCall
from farmhand.service.chat import ChatRequest
from farmhand.service.mcp_servers import parse_mcp_servers
from farmhand.tools.choice import AUTO, ToolChoice
from farmhand.tools.definition import ToolDefinition
from farmhand.tools.formats import EXPECTED_TOOL_CHOICE, tool_choice_from_openai
from farmhand.tools.formats.detect import to_openai_tools
from farmhand.tools.preview import preview

ROLES = ("system", "developer", "user", "assistant", "tool")
UNSUPPORTED_PARTS = ("image_url", "input_audio", "file")
SCHEMA_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")


@dataclass(frozen=True)
class OpenAIChat:
    """The parsed request: what to run, and how to answer."""

    chat: ChatRequest
    model: str
    stream: bool
    include_usage: bool
    include_tool_results: bool


def parse_chat(body: dict[str, Any]) -> OpenAIChat:
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise RequestError(
            "`model` is required: the name of a model from GET /v1/models", param="model"
        )
    tools = _tools(body.get("tools"))
    settings = GenerationSettings(
        temperature=number(body, "temperature", minimum=0, maximum=2),
        max_tokens=integer(body, "max_completion_tokens", minimum=1)
        or integer(body, "max_tokens", minimum=1),
        seed=integer(body, "seed"),
        stop=_stop(body.get("stop")),
        tool_choice=_tool_choice(body.get("tool_choice"), tools),
        parallel_tool_calls=flag(body, "parallel_tool_calls", True) is not False,
        stream=flag(body, "stream", False) is True,
        top_p=number(body, "top_p", minimum=0, maximum=1),
        response_format=_response_format(body.get("response_format")),
        template_kwargs=request_template_kwargs(
            body.get("chat_template"), body.get("chat_template_kwargs")
        ),
    )
    if integer(body, "n", minimum=1) not in (None, 1):
        raise RequestError("only n=1 is supported", param="n")
    tools_path = body.get("tools_path")
    if tools_path is not None and (not isinstance(tools_path, str) or not tools_path):
        raise RequestError("tools_path must be a directory path", param="tools_path")
    timeout_ms = number(body, "tool_timeout", minimum=1, maximum=LARGEST_TIMEOUT_MS)
    stream_options = body.get("stream_options")
    if stream_options is not None and not isinstance(stream_options, dict):
        raise RequestError("stream_options must be an object", param="stream_options")
    chat = ChatRequest(
        model=model,
        messages=_messages(body.get("messages")),
        settings=settings,
        client_tools=tools,
        mcp_servers=parse_mcp_servers(body.get("mcp_servers")),
        tools_path=Path(tools_path).expanduser() if tools_path else None,
        max_tool_rounds=integer(body, "max_tool_rounds", minimum=1),
        tool_timeout=timeout_ms / 1000 if timeout_ms is not None else None,
        jit_tools=flag(body, "jit_tools", None),
        jit_max_tools=integer(body, "jit_max_tools", minimum=1),
        jit_connect_eager=flag(body, "jit_connect_eager", None),
    )
    return OpenAIChat(
        chat=chat,
        model=model,
        stream=bool(flag(body, "stream", False)),
        include_usage=bool((stream_options or {}).get("include_usage", False)),
        include_tool_results=bool(flag(body, "include_tool_results", False)),
    )


def _messages(value: object) -> list[Message]:
    if value is None:
        raise RequestError("`messages` is required: a list of chat messages", param="messages")
    if not isinstance(value, list) or not value:
        raise RequestError("`messages` must be a non-empty list of messages", param="messages")
    names: dict[str, str] = {}  # tool call id -> tool name, for the tool messages
    messages = []
    for index, item in enumerate(value):
        message = _message(item, f"messages[{index}]", names)
        for call in message.tool_calls:
            names[call.id] = call.name
        messages.append(message)
    return messages


def _message(item: object, where: str, names: dict[str, str]) -> Message:
    if not isinstance(item, dict):
        raise RequestError(f"{where} must be an object with 'role' and 'content'", param=where)
    role = item.get("role")
    if role not in ROLES:
        raise RequestError(
            f"{where}.role is {role!r}; use one of {', '.join(ROLES)}", param=f"{where}.role"
        )
    content = _content(item.get("content"), f"{where}.content")
    if role in ("system", "developer"):
        return Message.system(content)
    if role == "user":
        return Message.user(content)
    if role == "assistant":
        calls = item.get("tool_calls") or []
        if not isinstance(calls, list):
            raise RequestError(f"{where}.tool_calls must be a list", param=f"{where}.tool_calls")
        parsed = tuple(_call(c, f"{where}.tool_calls[{i}]") for i, c in enumerate(calls))
        return Message.assistant(content, parsed)
    call_id = item.get("tool_call_id")
    if not isinstance(call_id, str) or not call_id:
        raise RequestError(
            f"{where} is a tool message without tool_call_id; set it to the id of the"
            " assistant tool call it answers",
            param=f"{where}.tool_call_id",
        )
    name = names.get(call_id) or item.get("name")
    return Message(
        "tool", content, tool_call_id=call_id, name=name if isinstance(name, str) else ""
    )


def _content(value: object, where: str) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        texts = []
        for i, part in enumerate(value):
            if (
                isinstance(part, dict)
                and part.get("type") == "text"
                and isinstance(part.get("text"), str)
            ):
                texts.append(part["text"])
            elif isinstance(part, dict) and part.get("type") in UNSUPPORTED_PARTS:
                raise RequestError(
                    f"{where}[{i}] is a {part['type']} part; farmhand takes text parts only",
                    param=where,
                )
            else:
                raise RequestError(
                    f'{where}[{i}] must be a text part {{"type": "text", "text": "..."}}',
                    param=where,
                )
        return "".join(texts)
    raise RequestError(f"{where} must be a string or a list of text parts", param=where)


def _call(value: object, where: str) -> ToolCall:
    if not isinstance(value, dict) or not isinstance(value.get("function"), dict):
        raise RequestError(
            f'{where} must be {{"id", "type": "function", "function": {{"name", "arguments"}}}}',
            param=where,
        )
    function = value["function"]
    name = function.get("name")
    if not isinstance(name, str) or not name:
        raise RequestError(f"{where}.function.name must be a non-empty string", param=where)
    call_id = value.get("id")
    if not isinstance(call_id, str) or not call_id:
        raise RequestError(f"{where}.id must be the call's id (a non-empty string)", param=where)
    raw = function.get("arguments", "{}")
    if isinstance(raw, dict):
        return ToolCall(name, raw, call_id)
    if not isinstance(raw, str):
        raise RequestError(f"{where}.function.arguments must be a JSON string", param=where)
    try:
        arguments = strict_loads(raw or "{}", f"{where}.function.arguments")
    except RequestError:
        arguments = None
    if not isinstance(arguments, dict):
        # What the model wrote stays in the history; the loop's repair handles it.
        return ToolCall(name, {}, call_id, parse_error=f"arguments were not a JSON object: {raw}")
    return ToolCall(name, arguments, call_id)


def _tools(value: object) -> list[ToolDefinition]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise RequestError("tools must be a list of function tools", param="tools")
    try:
        tools = to_openai_tools(value)
    except ConfigError as exc:
        raise RequestError(str(exc), param="tools") from None
    seen: set[str] = set()
    for tool in tools:
        if tool.name in seen:
            raise RequestError(f"tool name {tool.name!r} is used twice", param="tools")
        seen.add(tool.name)
    return tools


def _tool_choice(value: object, tools: list[ToolDefinition]) -> ToolChoice:
    if value is None:
        return AUTO
    try:
        choice = tool_choice_from_openai(value)
    except ConfigError:
        raise RequestError(
            f"tool_choice {json.dumps(value)} is not valid; use {EXPECTED_TOOL_CHOICE}",
            param="tool_choice",
        ) from None
    if choice.mode == "required" and not tools:
        raise RequestError(
            'tool_choice "required" needs `tools`; add the tools the model must choose from',
            param="tool_choice",
        )
    return choice


def _stop(value: object) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list) and all(isinstance(v, str) for v in value) and len(value) <= 4:
        return tuple(value)
    raise RequestError("stop must be a string or a list of up to 4 strings", param="stop")


def _response_format(value: object) -> ResponseFormat | None:
    """`response_format` as the answer's shape: None (free text), "json" (any JSON object)
    or the JSON Schema of `json_schema.schema` (left out: any JSON object, as OpenAI reads
    it). `strict` asks for what farmhand always does: the answer is constrained to it."""
    kind = value.get("type") if isinstance(value, dict) else None
    if value is None or kind == "text":
        return None
    if kind == "json_object":
        return "json"
    if kind != "json_schema" or not isinstance(value, dict):
        raise RequestError(
            f'response_format {preview(value)} is not a format; use {{"type": "text"}},'
            ' {"type": "json_object"} or {"type": "json_schema", "json_schema": {"name":'
            ' "...", "schema": {...}}}',
            param="response_format",
        )
    form = value.get("json_schema")
    if not isinstance(form, dict):
        raise RequestError(
            'response_format json_schema needs "json_schema": {"name": "...", "schema": {...}}',
            param="response_format.json_schema",
        )
    name = form.get("name")
    if not isinstance(name, str) or not SCHEMA_NAME.fullmatch(name):
        raise RequestError(
            "response_format.json_schema.name must be a name of up to 64 letters, digits,"
            f" underscores and dashes, got {preview(name)}",
            param="response_format.json_schema.name",
        )
    if not isinstance(form.get("strict", False), bool | None):
        raise RequestError(
            "response_format.json_schema.strict must be true or false",
            param="response_format.json_schema.strict",
        )
    schema = form.get("schema")
    if schema is None:
        return "json"
    if not isinstance(schema, dict):
        raise RequestError(
            "response_format.json_schema.schema must be the JSON Schema of the answer, as an"
            " object",
            param="response_format.json_schema.schema",
        )
    return json_schema(schema, "response_format.json_schema.schema")
