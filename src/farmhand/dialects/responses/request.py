"""An OpenAI Responses request body (`POST /v1/responses`) -> a `ResponsesRequest`, or a
RequestError saying what to fix (400, `param` naming the field).

The tools and tool_choice are read by `tools.py`; the input items by
`items.py`, once the conversation they continue is known; item_reference
items are resolved first (`references.resolve_references`). A JSON
`text.format` (`json_schema` or `json_object`) is the answer's shape
(`GenerationSettings.response_format`, as Ollama's `format` is). What farmhand reads but
cannot honour (a custom tool's grammar) is noted in the response's `farmhand.notes`;
hosted-only features (`background`, `conversation`, `prompt`) are a 400 that says what to
send instead.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from typing import Any

from farmhand.config.models import McpServerConfig
from farmhand.dialects.fields import flag, integer, json_schema, number
from farmhand.dialects.responses.tools import RequestTools, as_list, read_tools, tool_choice
from farmhand.errors import RequestError
from farmhand.generation.settings import GenerationSettings, ResponseFormat
from farmhand.generation.template_kwargs import request_template_kwargs
from farmhand.service.mcp_servers import parse_mcp_servers
from farmhand.tools.preview import preview

REFUSED = {
    "background": "background responses are not supported; send the request without it",
    "conversation": "conversation objects are not supported; continue a response with"
    " previous_response_id instead",
    "prompt": "prompt templates are not supported; send instructions and input instead",
}
ECHOED = (
    "instructions", "metadata", "temperature", "top_p", "max_output_tokens", "text", "tools",
    "tool_choice",
)  # fmt: skip


@dataclass
class ResponsesRequest:
    """The parsed request: what to run, what to answer with, and what was left out."""

    model: str
    stream: bool
    store: bool
    previous_response_id: str | None
    instructions: str | None
    input_items: list[dict[str, Any]]
    settings: GenerationSettings
    tools: RequestTools
    mcp_servers: list[McpServerConfig | str]
    max_tool_rounds: int | None
    echo: dict[str, Any]  # request fields a Response object repeats
    notes: list[str] = field(default_factory=list)
    disabled_servers: frozenset[str] = frozenset()
    """The model's MCP servers this chat leaves out (farmhand's `disabled_mcp_servers`)."""


def parse_responses(body: dict[str, Any]) -> ResponsesRequest:
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise RequestError(
            "`model` is required: the name of a model from GET /v1/models", param="model"
        )
    for key, message in REFUSED.items():
        if body.get(key) not in (None, False):
            raise RequestError(message, param=key)
    instructions = body.get("instructions")
    if instructions is not None and not isinstance(instructions, str):
        raise RequestError("instructions must be a string", param="instructions")
    previous = body.get("previous_response_id")
    if previous is not None and (not isinstance(previous, str) or not previous):
        raise RequestError(
            "previous_response_id must be a response id", param="previous_response_id"
        )
    items = input_items(body.get("input"), previous is not None)
    tools = read_tools([*as_list(body.get("tools"), "tools"), *_additional_tools(items)])
    parsed = ResponsesRequest(
        model=model,
        stream=flag(body, "stream", False),
        store=flag(body, "store", True),
        previous_response_id=previous,
        instructions=instructions,
        input_items=items,
        settings=GenerationSettings(),
        tools=tools,
        mcp_servers=parse_mcp_servers(body.get("mcp_servers")),
        max_tool_rounds=integer(body, "max_tool_rounds", minimum=1),
        echo={key: body.get(key) for key in ECHOED},
        notes=list(tools.notes),
        disabled_servers=_names(body.get("disabled_mcp_servers"), "disabled_mcp_servers"),
    )
    text = _text(body.get("text"))
    parsed.echo["text"] = text
    parsed.settings = GenerationSettings(
        temperature=number(body, "temperature", minimum=0, maximum=2),
        max_tokens=integer(body, "max_output_tokens", minimum=1),
        tool_choice=tool_choice(body.get("tool_choice"), tools),
        parallel_tool_calls=flag(body, "parallel_tool_calls", True),
        stream=parsed.stream,  # a whole answer from the backend when the client wants one
        top_p=number(body, "top_p", minimum=0, maximum=1),
        response_format=answer_format(text["format"]),
        template_kwargs=request_template_kwargs(
            body.get("chat_template"), body.get("chat_template_kwargs")
        ),
    )
    return parsed


def _names(value: object, param: str) -> frozenset[str]:
    if value is None:
        return frozenset()
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise RequestError(f"{param} must be a list of MCP server names", param=param)
    return frozenset(value)


def input_items(value: object, continues: bool) -> list[dict[str, Any]]:
    """The input as a list of item objects (a string is one user message)."""
    if value is None or value == "" or value == []:
        if continues:
            return []
        raise RequestError("`input` is required: a string, or a list of input items", param="input")
    if isinstance(value, str):
        return [
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": value}]}
        ]
    if not isinstance(value, list):
        raise RequestError("input must be a string or a list of input items", param="input")
    for index, item in enumerate(value):
        if not isinstance(item, dict):
            raise RequestError(
                f"input[{index}] must be an item object such as"
                ' {"role": "user", "content": "..."}',
                param=f"input[{index}]",
            )
    return value


def new_id(prefix: str) -> str:
    """An item's or response's id, OpenAI-style: `msg_...`, `fc_...`, `resp_...`."""
    return f"{prefix}_{secrets.token_hex(16)}"


def with_item_ids(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The input items as OpenAI keeps and lists them (`GET .../input_items`): a message
    sent as `{"role", "content"}` gets `type: "message"`, an id (`msg_...`, once: the
    stored item keeps it, so every read and an item_reference see the same), a status, and
    its text as a content part. Other items are kept as they were sent."""
    filled = []
    for item in items:
        kind = item.get("type", "message" if "role" in item else None)
        if kind != "message":
            filled.append(item)
            continue
        content = item.get("content")
        if isinstance(content, str):
            part: dict[str, Any] = {"type": "input_text", "text": content}
            if item.get("role") == "assistant":
                part = {"type": "output_text", "text": content, "annotations": []}
            content = [part]
        filled.append(
            {
                "id": new_id("msg"),
                "type": "message",
                "status": "completed",
                **item,
                "content": content,
            }
        )
    return filled


def _additional_tools(items: list[dict[str, Any]]) -> list[Any]:
    """Tools that arrive as an input item (Codex's `additional_tools` for newer models)."""
    found: list[Any] = []
    for index, item in enumerate(items):
        if item.get("type") == "additional_tools":
            found += as_list(item.get("tools"), f"input[{index}].tools")
    return found


def _text(value: object) -> dict[str, Any]:
    """The request's `text` as the response repeats it: its format, plain text if unset."""
    if value is None:
        value = {}
    if not isinstance(value, dict):
        raise RequestError(
            'text must be an object such as {"format": {"type": "text"}}', param="text"
        )
    form = value.get("format")
    return {**value, "format": {"type": "text"} if form is None else form}


def answer_format(form: object) -> ResponseFormat | None:
    """`text.format` as the answer's shape: None (free text), "json" or a JSON Schema."""
    kind = form.get("type") if isinstance(form, dict) else None
    if kind == "text":
        return None
    if kind == "json_object":
        return "json"
    if kind == "json_schema" and isinstance(form, dict):
        schema = form.get("schema")
        if not isinstance(schema, dict):
            raise RequestError(
                'text.format json_schema needs "schema": the JSON Schema the answer must'
                " match, as an object",
                param="text.format.schema",
            )
        name = form.get("name")
        if name is not None and not isinstance(name, str):
            raise RequestError("text.format.name must be a string", param="text.format.name")
        return json_schema(schema, "text.format.schema")
    raise RequestError(
        f"text.format {preview(form)} is not a format; use"
        ' {"type": "text"}, {"type": "json_object"} or {"type": "json_schema", "name":'
        ' "...", "schema": {...}}',
        param="text.format",
    )
