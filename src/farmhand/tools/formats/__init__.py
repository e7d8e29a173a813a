"""Tool formats. OpenAI's shape is canonical and lives here; each foreign format has a module.

    {"type": "function", "function": {"name", "description"?, "parameters"?, "strict"?}}

`anthropic`, `bedrock` and `google` convert tools and tool_choice both ways as pure
functions; `detect` recognises any format (MCP's too) and converts between them.
This module holds only the canonical shape's predicates and small helpers, and imports
none of its submodules (they import it).
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from typing import Any, Literal, cast

from farmhand.errors import ConfigError
from farmhand.tools.choice import ToolChoice, ToolChoiceMode
from farmhand.tools.definition import ToolDefinition
from farmhand.tools.preview import preview

FormatName = Literal["openai", "anthropic", "bedrock", "google"]
FORMAT_NAMES: tuple[FormatName, ...] = ("openai", "anthropic", "bedrock", "google")

# "auto" | "none" | "required" | {"type": "function", "function": {"name": ...}}
OpenAIToolChoice = str | dict[str, Any]
TOOL_CHOICE_MODES = ("auto", "none", "required")

# What the converters take: a ToolDefinition or an OpenAI-shaped dict.
ToolLike = ToolDefinition | Mapping[str, Any]

EXPECTED_OPENAI_TOOL = '{"type": "function", "function": {"name": ..., "parameters": {...}}}'
EXPECTED_TOOL_CHOICE = (
    '"auto", "none", "required" or {"type": "function", "function": {"name": ...}}'
)


def empty_object_schema() -> dict[str, Any]:
    """A fresh `{"type": "object", "properties": {}}`: the schema of a tool without arguments."""
    return {"type": "object", "properties": {}}


def is_openai_tool(tool: object) -> bool:
    """True for `{"type": "function", "function": {"name": <non-empty str>, ...}}`."""
    if not isinstance(tool, Mapping) or tool.get("type") != "function":
        return False
    function = tool.get("function")
    return isinstance(function, Mapping) and _is_name(function.get("name"))


def is_openai_tool_array(tools: object) -> bool:
    """True for a non-empty list whose every item is an OpenAI tool."""
    return isinstance(tools, list) and bool(tools) and all(is_openai_tool(t) for t in tools)


def is_openai_tool_choice(choice: object) -> bool:
    """True for "auto", "none", "required" and the named-function form."""
    if isinstance(choice, str):
        return choice in TOOL_CHOICE_MODES
    return forced_tool_name(choice) is not None


def forced_tool_name(choice: object) -> str | None:
    """The tool a named OpenAI tool_choice forces, or None for anything else."""
    if not isinstance(choice, Mapping) or choice.get("type") != "function":
        return None
    function = choice.get("function")
    if not isinstance(function, Mapping):
        return None
    name = function.get("name")
    return name if _is_name(name) else None


def named_tool_choice(name: str) -> dict[str, Any]:
    """OpenAI's tool_choice forcing one tool."""
    return {"type": "function", "function": {"name": name}}


def require_openai_tool_choice(choice: object) -> OpenAIToolChoice:
    """`choice` itself when it is an OpenAI tool_choice; otherwise a ConfigError."""
    if isinstance(choice, str) and choice in TOOL_CHOICE_MODES:
        return choice
    name = forced_tool_name(choice)
    if name is not None:
        return named_tool_choice(name)
    raise ConfigError(
        f"tool_choice {preview(choice)} is not an OpenAI tool_choice; "
        f"expected {EXPECTED_TOOL_CHOICE}"
    )


def tool_choice_from_openai(choice: object) -> ToolChoice:
    """The neutral ToolChoice for an OpenAI tool_choice; ConfigError for anything else."""
    checked = require_openai_tool_choice(choice)
    if isinstance(checked, str):
        return ToolChoice(cast(ToolChoiceMode, checked))
    return ToolChoice.tool(checked["function"]["name"])


def openai_tool_dicts(tools: Iterable[ToolLike]) -> list[dict[str, Any]]:
    """Deep copies of OpenAI-shaped tools; ToolDefinitions are rendered with `to_openai()`."""
    result: list[dict[str, Any]] = []
    for index, tool in enumerate(tools):
        if isinstance(tool, ToolDefinition):
            result.append(copy.deepcopy(tool.to_openai()))
        elif is_openai_tool(tool):
            result.append(copy.deepcopy(dict(tool)))
        else:
            raise ConfigError(
                f"tool {index} ({preview(tool)}) is not in OpenAI's shape; expected "
                f"{EXPECTED_OPENAI_TOOL}. Tools in other formats go through "
                "farmhand.tools.formats.detect.convert_tools"
            )
    return result


def _is_name(value: object) -> bool:
    return isinstance(value, str) and bool(value)
