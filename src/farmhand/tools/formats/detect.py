"""Recognise which format tools (and tool_choice) are written in, and convert between any two.

Sources are the four API formats plus MCP's `{"name", "description", "inputSchema"}`.
Tools already in the target's own format pass through unchanged; everything else goes
through OpenAI's shape. Anything unrecognisable is a ConfigError that names the tool,
what is wrong with it and what shapes would have worked.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

from farmhand.errors import ConfigError
from farmhand.tools.definition import ToolDefinition
from farmhand.tools.formats import (
    EXPECTED_TOOL_CHOICE,
    FORMAT_NAMES,
    FormatName,
    anthropic,
    bedrock,
    google,
    is_openai_tool,
    is_openai_tool_choice,
    require_openai_tool_choice,
)
from farmhand.tools.preview import preview
from farmhand.tools.schema import as_parameters_schema

SourceFormat = Literal["openai", "anthropic", "bedrock", "google", "mcp"]

EXPECTED_SHAPES = (
    'OpenAI {"type": "function", "function": {"name", "description", "parameters"}}, '
    'Anthropic {"name", "description", "input_schema"}, '
    'Bedrock {"toolSpec": {"name", "description", "inputSchema": {"json"}}}, '
    'Google {"functionDeclarations": [{"name", "description", "parameters"}]} '
    'or MCP {"name", "description", "inputSchema"}'
)


def detect_tool_format(tool: object) -> SourceFormat | None:
    """The format one tool is written in, or None when it is none of them."""
    return None if _problem(tool) else _claimed_format(tool)


def detect_format(tools: Sequence[object]) -> SourceFormat | None:
    """The one format all `tools` share; None when empty, mixed or unrecognisable."""
    formats = {detect_tool_format(tool) for tool in tools}
    if len(formats) != 1:
        return None
    return formats.pop()


def _claimed_format(tool: object) -> SourceFormat | None:
    """The format a tool's keys point at, whether or not the rest of it is right."""
    if isinstance(tool, ToolDefinition):
        return "openai"
    if not isinstance(tool, Mapping):
        return None
    if "toolSpec" in tool:
        return "bedrock"
    if "functionDeclarations" in tool or "function_declarations" in tool:
        return "google"
    if "function" in tool or tool.get("type") == "function":
        return "openai"
    if "input_schema" in tool:
        return "anthropic"
    if "inputSchema" in tool:
        return "mcp"
    if "name" in tool:
        return "openai"  # the flat form: {"name", "description", "parameters"}
    return None


def _problem(tool: object) -> str | None:
    """What keeps `tool` from being a valid tool of the format it claims, or None."""
    claimed = _claimed_format(tool)
    if isinstance(tool, ToolDefinition):
        return None
    if not isinstance(tool, Mapping):
        return f"is {type(tool).__name__} {preview(tool)}, not a mapping"
    if claimed is None:
        return f"has none of the keys of a known tool format ({preview(tool)}); no 'name'"
    checks: dict[SourceFormat, Callable[[Mapping[str, Any]], str | None]] = {
        "openai": _openai_problem,
        "anthropic": lambda t: _named_problem(t, "input_schema", "Anthropic"),
        "bedrock": _bedrock_problem,
        "google": _google_problem,
        "mcp": lambda t: _named_problem(t, "inputSchema", "MCP"),
    }
    return checks[claimed](tool)


def _name_problem(name: object, where: str) -> str | None:
    if name is None:
        return f"{where} has no 'name'"
    if not isinstance(name, str) or not name:
        return f"{where} has name {preview(name)}; a tool name must be a non-empty string"
    return None


def _schema_problem(schema: object, key: str) -> str | None:
    if schema is not None and not isinstance(schema, Mapping):
        return f"'{key}' is {preview(schema)}; it must be a JSON Schema object"
    return None


def _openai_problem(tool: Mapping[str, Any]) -> str | None:
    kind = tool.get("type")
    if kind not in (None, "function"):
        return f"has type {preview(kind)}; OpenAI tools have type 'function'"
    function = tool.get("function", tool)  # the flat form has no "function"
    if not isinstance(function, Mapping):
        return f"'function' is {preview(function)}; it must be an object with a 'name'"
    where = "'function'" if "function" in tool else "the tool"
    return _name_problem(function.get("name"), where) or _schema_problem(
        function.get("parameters"), "parameters"
    )


def _named_problem(tool: Mapping[str, Any], schema_key: str, label: str) -> str | None:
    problem = _name_problem(tool.get("name"), f"the {label} tool")
    if problem is None and not isinstance(tool.get(schema_key), Mapping):
        return f"'{schema_key}' is {preview(tool.get(schema_key))}; it must be a JSON Schema object"
    return problem


def _bedrock_problem(tool: Mapping[str, Any]) -> str | None:
    spec = tool["toolSpec"]
    if not isinstance(spec, Mapping):
        return f"'toolSpec' is {preview(spec)}; it must be an object with a 'name'"
    problem = _name_problem(spec.get("name"), "'toolSpec'")
    input_schema = spec.get("inputSchema")
    if problem is None and input_schema is not None:
        if not isinstance(input_schema, Mapping):
            return (
                f"'toolSpec.inputSchema' is {preview(input_schema)}; expected {{'json': {{...}}}}"
            )
        problem = _schema_problem(input_schema.get("json"), "toolSpec.inputSchema.json")
    return problem


def _google_problem(tool: Mapping[str, Any]) -> str | None:
    declarations = tool.get("functionDeclarations", tool.get("function_declarations"))
    if not isinstance(declarations, list):
        return f"'functionDeclarations' is {preview(declarations)}; it must be a list"
    for index, declaration in enumerate(declarations):
        where = f"functionDeclarations[{index}]"
        if not isinstance(declaration, Mapping):
            return f"{where} is {preview(declaration)}, not an object"
        problem = _name_problem(declaration.get("name"), where) or _schema_problem(
            declaration.get("parameters"), f"{where}.parameters"
        )
        if problem:
            return problem
    return None


def _checked(tools: object) -> list[tuple[SourceFormat, Any]]:
    """Each tool with its format; a ConfigError for the first one that has none."""
    if isinstance(tools, (str, bytes, Mapping)) or not isinstance(tools, Sequence):
        raise ConfigError(f"tools must be a list of tool definitions, got {preview(tools)}")
    result: list[tuple[SourceFormat, Any]] = []
    for index, tool in enumerate(tools):
        problem = _problem(tool)
        claimed = _claimed_format(tool)
        if problem is not None or claimed is None:
            raise ConfigError(
                f"tool {index}{_label(tool)} is not a tool definition: {problem}. "
                f"Expected one of: {EXPECTED_SHAPES}"
            )
        result.append((claimed, tool))
    return result


def _label(tool: object) -> str:
    name = tool.get("name") if isinstance(tool, Mapping) else None
    if isinstance(tool, Mapping) and isinstance(tool.get("function"), Mapping):
        name = tool["function"].get("name")
    return f" ({name!r})" if isinstance(name, str) and name else ""


def tools_from_mcp(tools: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """MCP tools as OpenAI tools; `inputSchema` becomes an object schema without `$schema`."""
    result: list[dict[str, Any]] = []
    for tool in tools:
        function: dict[str, Any] = {"name": tool["name"]}
        if isinstance(tool.get("description"), str):
            function["description"] = tool["description"]
        function["parameters"] = as_parameters_schema(tool.get("inputSchema"))
        result.append({"type": "function", "function": function})
    return result


def _to_openai_dict(fmt: SourceFormat, tool: Any) -> list[dict[str, Any]]:
    if isinstance(tool, ToolDefinition):
        return [copy.deepcopy(tool.to_openai())]
    if fmt == "openai":
        if is_openai_tool(tool):
            return [copy.deepcopy(dict(tool))]
        function = tool.get("function", tool)  # no "type", or the flat form
        return [{"type": "function", "function": copy.deepcopy(dict(function))}]
    converters: dict[SourceFormat, Callable[[list[Any]], list[dict[str, Any]]]] = {
        "anthropic": anthropic.tools_from_anthropic,
        "bedrock": bedrock.tools_from_bedrock,
        "google": google.tools_from_google,
        "mcp": tools_from_mcp,
    }
    return converters[fmt]([tool])


def to_openai_dicts(tools: object) -> list[dict[str, Any]]:
    """Tools in any format as OpenAI-shaped dicts (which keep `strict`)."""
    return [d for fmt, tool in _checked(tools) for d in _to_openai_dict(fmt, tool)]


def to_openai_tools(tools: object) -> list[ToolDefinition]:
    """Tools in any format as ToolDefinitions; MCP tools keep their `annotations`."""
    definitions: list[ToolDefinition] = []
    for fmt, tool in _checked(tools):
        if isinstance(tool, ToolDefinition):
            definitions.append(tool)  # already canonical, annotations and all
            continue
        for converted in _to_openai_dict(fmt, tool):
            definition = ToolDefinition.from_openai(converted)
            annotations = tool.get("annotations") if fmt == "mcp" else None
            if isinstance(annotations, Mapping):
                definition = dataclasses.replace(definition, annotations=dict(annotations))
            definitions.append(definition)
    return definitions


def _require_target(target: str) -> FormatName:
    for name in FORMAT_NAMES:
        if target == name:
            return name
    raise ConfigError(f"unknown tool format {target!r}; expected one of {', '.join(FORMAT_NAMES)}")


def convert_tools(tools: object, target: str) -> list[dict[str, Any]]:
    """Tools in any format, in `target`'s format.

    When every tool is already in the target's format it passes through unchanged (a
    copy); otherwise all go through OpenAI's shape.
    """
    fmt = _require_target(target)
    checked = _checked(tools)
    if checked and all(source == fmt for source, _ in checked):
        return [
            copy.deepcopy(tool.to_openai() if isinstance(tool, ToolDefinition) else dict(tool))
            for _, tool in checked
        ]
    dicts = [d for source, tool in checked for d in _to_openai_dict(source, tool)]
    writers: dict[FormatName, Callable[[list[dict[str, Any]]], list[dict[str, Any]]]] = {
        "openai": lambda ds: ds,
        "anthropic": anthropic.tools_to_anthropic,
        "bedrock": bedrock.tools_to_bedrock,
        "google": google.tools_to_google,
    }
    return writers[fmt](dicts)


def detect_tool_choice_format(choice: object) -> FormatName | None:
    """Which format a tool_choice is written in, or None."""
    if is_openai_tool_choice(choice):
        return "openai"
    if anthropic.is_anthropic_tool_choice(choice):
        return "anthropic"
    if bedrock.is_bedrock_tool_choice(choice):
        return "bedrock"
    if google.is_google_tool_choice(choice):
        return "google"
    return None


def convert_tool_choice(choice: object, target: str) -> Any:
    """A tool_choice in any format, in `target`'s format (None stays None: not set).

    A choice already in the target's format passes through unchanged. For Bedrock, "none"
    becomes None: leave the tools out of that request.
    """
    fmt = _require_target(target)
    if choice is None:
        return None
    source = detect_tool_choice_format(choice)
    if source is None:
        raise ConfigError(
            f"tool_choice {preview(choice)} is not recognised; expected {EXPECTED_TOOL_CHOICE}, "
            "or the same in Anthropic, Bedrock or Google form"
        )
    if source == fmt:
        return copy.deepcopy(choice)
    readers: dict[FormatName, Callable[[Any], Any]] = {
        "openai": require_openai_tool_choice,
        "anthropic": anthropic.tool_choice_from_anthropic,
        "bedrock": bedrock.tool_choice_from_bedrock,
        "google": google.tool_choice_from_google,
    }
    writers: dict[FormatName, Callable[[Any], Any]] = {
        "openai": lambda c: c,
        "anthropic": anthropic.tool_choice_to_anthropic,
        "bedrock": bedrock.tool_choice_to_bedrock,
        "google": google.tool_choice_to_google,
    }
    return writers[fmt](readers[source](choice))
