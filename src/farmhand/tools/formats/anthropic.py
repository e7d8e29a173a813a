"""Anthropic's Messages API tool format, both ways.

tool:        {"name", "description"?, "input_schema", "strict"?}
tool_choice: {"type": "auto" | "any" | "none"} or {"type": "tool", "name": ...}
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
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

_MODE_TO_ANTHROPIC = {"auto": "auto", "none": "none", "required": "any"}
_MODE_FROM_ANTHROPIC = {value: key for key, value in _MODE_TO_ANTHROPIC.items()}


def tools_to_anthropic(
    tools: Iterable[ToolLike], *, keep_strict: bool = False
) -> list[dict[str, Any]]:
    """OpenAI tools as Anthropic tools.

    `strict` is dropped unless `keep_strict`: Anthropic honours it only with structured
    outputs enabled, which the caller knows and this function does not.
    """
    result: list[dict[str, Any]] = []
    for tool in openai_tool_dicts(tools):
        function = tool["function"]
        native: dict[str, Any] = {"name": function["name"]}
        if isinstance(function.get("description"), str):
            native["description"] = function["description"]
        parameters = function.get("parameters")
        native["input_schema"] = parameters if parameters is not None else empty_object_schema()
        if keep_strict and "strict" in function:
            native["strict"] = function["strict"]
        result.append(native)
    return result


def is_anthropic_tool(tool: object) -> bool:
    """True for `{"name": <str>, "input_schema": {...}}`."""
    return (
        isinstance(tool, Mapping)
        and isinstance(tool.get("name"), str)
        and bool(tool["name"])
        and isinstance(tool.get("input_schema"), Mapping)
    )


def tools_from_anthropic(tools: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Anthropic tools as OpenAI tools (`cache_control` and other API extras are dropped)."""
    result: list[dict[str, Any]] = []
    for index, tool in enumerate(tools):
        if not is_anthropic_tool(tool):
            raise ConfigError(
                f"tool {index} ({preview(tool)}) is not an Anthropic tool; expected "
                '{"name": ..., "description": ..., "input_schema": {...}}'
            )
        function: dict[str, Any] = {"name": tool["name"]}
        if isinstance(tool.get("description"), str):
            function["description"] = tool["description"]
        function["parameters"] = copy.deepcopy(dict(tool["input_schema"]))
        if "strict" in tool:
            function["strict"] = tool["strict"]
        result.append({"type": "function", "function": function})
    return result


def tool_choice_to_anthropic(choice: OpenAIToolChoice) -> dict[str, Any]:
    """ "auto" -> auto, "none" -> none, "required" -> any, a named function -> tool."""
    checked = require_openai_tool_choice(choice)
    name = forced_tool_name(checked)
    if name is not None:
        return {"type": "tool", "name": name}
    return {"type": _MODE_TO_ANTHROPIC[str(checked)]}


def is_anthropic_tool_choice(choice: object) -> bool:
    if not isinstance(choice, Mapping):
        return False
    kind = choice.get("type")
    if kind == "tool":
        return isinstance(choice.get("name"), str) and bool(choice["name"])
    return kind in _MODE_FROM_ANTHROPIC


def tool_choice_from_anthropic(choice: Mapping[str, Any]) -> OpenAIToolChoice:
    """The OpenAI tool_choice for an Anthropic one (`disable_parallel_tool_use` is dropped)."""
    if not is_anthropic_tool_choice(choice):
        raise ConfigError(
            f"tool_choice {preview(choice)} is not an Anthropic tool_choice; expected "
            '{"type": "auto" | "any" | "none"} or {"type": "tool", "name": ...}'
        )
    if choice["type"] == "tool":
        return named_tool_choice(choice["name"])
    return _MODE_FROM_ANTHROPIC[choice["type"]]
