"""Responses custom tools (`{"type": "custom", "name", "description", "format"}`): tools
whose input is free text rather than JSON arguments. Codex sends `apply_patch` this way.

Local models call functions, so a custom tool is offered as a function with one required
string parameter, `input`, and its call is rendered back as a `custom_tool_call` item
whose `input` is that string. A `grammar` format (lark or regex) cannot be enforced on
the model: the grammar is shown in the tool's description and a note says it was not
enforced.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from farmhand.errors import RequestError
from farmhand.messages import ToolCall
from farmhand.tools.definition import ToolDefinition

INPUT = "input"
INPUT_DESCRIPTION = (
    "The raw freeform input for this tool, exactly as the tool reads it: plain text, not JSON."
)


@dataclass(frozen=True)
class CustomTool:
    """The function the model is offered, and a note when the format cannot be enforced."""

    definition: ToolDefinition
    note: str | None = None


def custom_tool(tool: dict[str, Any], where: str) -> CustomTool:
    name = tool.get("name")
    if not isinstance(name, str) or not name:
        raise RequestError(
            f'{where}: a custom tool needs a "name"; write {{"type": "custom", "name": "...",'
            ' "description": "..."}',
            param="tools",
        )
    description = tool.get("description")
    text = description if isinstance(description, str) else ""
    form = tool.get("format")
    kind = form.get("type") if isinstance(form, dict) else form
    note = None
    if isinstance(form, dict) and kind == "grammar":
        syntax = form.get("syntax")
        definition = form.get("definition")
        if syntax not in ("lark", "regex") or not isinstance(definition, str):
            raise RequestError(
                f"{where}: the grammar format of custom tool {name!r} needs a syntax"
                ' ("lark" or "regex") and a definition (the grammar as a string)',
                param="tools",
            )
        text = f"{text}\n\nThe input must match this {syntax} grammar:\n{definition}".strip()
        note = (
            f"custom tool {name!r}: its {syntax} grammar is not enforced; the model is shown"
            " it and writes the input freely"
        )
    elif kind not in (None, "text"):
        raise RequestError(
            f'{where}: the format of custom tool {name!r} must be {{"type": "text"}} or'
            ' {"type": "grammar", "syntax": "lark" | "regex", "definition": "..."}',
            param="tools",
        )
    parameters = {
        "type": "object",
        "properties": {INPUT: {"type": "string", "description": INPUT_DESCRIPTION}},
        "required": [INPUT],
        "additionalProperties": False,
    }
    return CustomTool(ToolDefinition(name, text, parameters), note)


def call_input(call: ToolCall) -> str:
    """The text a model's call of a custom tool carries: its `input` argument (arguments
    the model wrote some other way are passed on as their JSON)."""
    value = call.arguments.get(INPUT)
    if isinstance(value, str):
        return value
    return call.arguments_json()


def as_call(name: str, call_id: str, text: object) -> ToolCall:
    """A `custom_tool_call` the client sends back, as the call the model made."""
    return ToolCall(name, {INPUT: text if isinstance(text, str) else ""}, call_id)


def streamed_input(arguments: str) -> str:
    """The part of the `input` string already written in a call's unfinished arguments
    JSON (`{"input": "...`), decoded; "" until it starts. Only whole characters are
    decoded, so the result only grows as more of the arguments arrive."""
    start = _input_start(arguments)
    if start is None:
        return ""
    decoded: list[str] = []
    at = start
    while at < len(arguments):
        char = arguments[at]
        if char == '"':
            break
        if char != "\\":
            decoded.append(char)
            at += 1
            continue
        length = 2
        if arguments[at + 1 : at + 2] == "u":  # a high surrogate is decoded with its pair
            length = 12 if arguments[at + 2 : at + 4].lower() in ("d8", "d9", "da", "db") else 6
        escape = arguments[at : at + length]
        if len(escape) < length:
            break  # the escape is still being written
        try:
            decoded.append(json.loads(f'"{escape}"'))
        except ValueError:
            break
        at += length
    return "".join(decoded)


def _input_start(arguments: str) -> int | None:
    """Where the `input` string's characters begin, or None before that is written."""
    text = arguments.lstrip()
    if not text.startswith("{"):
        return None
    key = f'"{INPUT}"'
    found = arguments.find(key)
    if found < 0:
        return None
    at = found + len(key)
    rest = arguments[at:]
    colon = len(rest) - len(rest.lstrip())
    if rest[colon : colon + 1] != ":":
        return None
    after = rest[colon + 1 :]
    quote = colon + 1 + len(after) - len(after.lstrip())
    if rest[quote : quote + 1] != '"':
        return None
    return at + quote + 1
