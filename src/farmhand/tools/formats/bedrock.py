"""AWS Bedrock's Converse API tool format, both ways.

    tool:        {"toolSpec": {"name", "description"?, "inputSchema": {"json": schema}}}
    tool_choice: {"auto": {}} | {"any": {}} | {"tool": {"name": ...}}

Converse has no "none": a request that must not call tools leaves `toolConfig` out, which is
what `tool_config_to_bedrock` returns None for. `strict` has no Bedrock equivalent.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from farmhand.errors import ConfigError
from farmhand.tools.formats import (
    OpenAIToolChoice,
    ToolLike,
    empty_object_schema,
    forced_tool_name,
    named_tool_choice,
    openai_tool_dicts,
    require_openai_tool_choice,
)
from farmhand.tools.preview import preview

_MODE_TO_BEDROCK = {"auto": "auto", "required": "any"}
_MODE_FROM_BEDROCK = {value: key for key, value in _MODE_TO_BEDROCK.items()}


def tools_to_bedrock(tools: Iterable[ToolLike]) -> list[dict[str, Any]]:
    """OpenAI tools as Converse `toolSpec`s."""
    result: list[dict[str, Any]] = []
    for tool in openai_tool_dicts(tools):
        function = tool["function"]
        spec: dict[str, Any] = {"name": function["name"]}
        # Converse rejects an empty description (minimum length 1), so "" is left out.
        if isinstance(function.get("description"), str) and function["description"]:
            spec["description"] = function["description"]
        parameters = function.get("parameters")
        schema = parameters if parameters is not None else empty_object_schema()
        spec["inputSchema"] = {"json": schema}
        result.append({"toolSpec": spec})
    return result


def is_bedrock_tool(tool: object) -> bool:
    """True for `{"toolSpec": {"name": <str>, ...}}`."""
    if not isinstance(tool, Mapping):
        return False
    spec = tool.get("toolSpec")
    return isinstance(spec, Mapping) and isinstance(spec.get("name"), str) and bool(spec["name"])


def tools_from_bedrock(tools: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Converse `toolSpec`s as OpenAI tools."""
    result: list[dict[str, Any]] = []
    for index, tool in enumerate(tools):
        if not is_bedrock_tool(tool):
            raise ConfigError(
                f"tool {index} ({preview(tool)}) is not a Bedrock tool; expected "
                '{"toolSpec": {"name": ..., "inputSchema": {"json": {...}}}}'
            )
        spec = tool["toolSpec"]
        function: dict[str, Any] = {"name": spec["name"]}
        if isinstance(spec.get("description"), str):
            function["description"] = spec["description"]
        input_schema = spec.get("inputSchema")
        if isinstance(input_schema, Mapping) and isinstance(input_schema.get("json"), Mapping):
            function["parameters"] = copy.deepcopy(dict(input_schema["json"]))
        result.append({"type": "function", "function": function})
    return result


def tool_choice_to_bedrock(choice: OpenAIToolChoice) -> dict[str, Any] | None:
    """The Converse toolChoice; None for "none", which Converse cannot express."""
    checked = require_openai_tool_choice(choice)
    name = forced_tool_name(checked)
    if name is not None:
        return {"tool": {"name": name}}
    if checked == "none":
        return None
    return {_MODE_TO_BEDROCK[str(checked)]: {}}


def tool_config_to_bedrock(
    tools: Sequence[ToolLike], choice: OpenAIToolChoice = "auto"
) -> dict[str, Any] | None:
    """The whole Converse `toolConfig`, or None when it must be left out of the request.

    None for no tools and for tool_choice "none": leaving the tools out is the only way
    to keep a Converse model from calling them.
    """
    native_choice = tool_choice_to_bedrock(choice)
    if not tools or native_choice is None:
        return None
    return {"tools": tools_to_bedrock(tools), "toolChoice": native_choice}


def is_bedrock_tool_choice(choice: object) -> bool:
    if not isinstance(choice, Mapping) or len(choice) != 1:
        return False
    (key, value), *_ = choice.items()
    if key == "tool":
        return isinstance(value, Mapping) and isinstance(value.get("name"), str)
    return key in _MODE_FROM_BEDROCK and isinstance(value, Mapping)


def tool_choice_from_bedrock(choice: Mapping[str, Any] | None) -> OpenAIToolChoice:
    """The OpenAI tool_choice for a Converse one; a missing toolChoice means "auto"."""
    if choice is None:
        return "auto"
    if not is_bedrock_tool_choice(choice):
        raise ConfigError(
            f"tool_choice {preview(choice)} is not a Bedrock toolChoice; expected "
            '{"auto": {}}, {"any": {}} or {"tool": {"name": ...}}'
        )
    (key, value), *_ = choice.items()
    if key == "tool":
        return named_tool_choice(value["name"])
    return _MODE_FROM_BEDROCK[key]
