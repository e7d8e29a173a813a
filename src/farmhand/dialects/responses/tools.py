"""The tools of a Responses request, and its tool_choice.

Function tools in Responses' flat shape (`{"type": "function", "name", "parameters",
"strict"}`; the Chat Completions nesting is read too), custom tools (free-text input,
offered as a function: `custom.py`), the functions and custom tools
inside a `namespace` tool (Codex sends one), and `mcp` tools (`mcp.py`).
Hosted tools farmhand cannot run (`web_search`, `file_search`, `code_interpreter`,
`computer_use_preview`, `image_generation`, `local_shell`, ...) are left out and named,
for the response's `farmhand.ignored_tools`: clients such as Codex always send some.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from farmhand.dialects.responses.custom import custom_tool
from farmhand.dialects.responses.mcp import parse_mcp_tool
from farmhand.errors import RequestError
from farmhand.service.mcp_tools import McpTool
from farmhand.tools.choice import AUTO, NONE, REQUIRED, ToolChoice
from farmhand.tools.definition import EMPTY_OBJECT_SCHEMA, SEPARATOR, ToolDefinition

OFFERED = ("function", "custom")  # the client's tools the model is offered


@dataclass(frozen=True)
class FunctionName:
    """A client function as the client named it: `namespace` set for one inside a
    namespace tool, `custom` for a custom tool (its calls are `custom_tool_call` items)."""

    name: str
    namespace: str | None = None
    custom: bool = False


@dataclass
class RequestTools:
    """`client`: the functions the model is offered (under names unique in the request),
    `functions`: those names -> the client's; `mcp`: the servers; `ignored`: the rest;
    `notes`: what farmhand could not honour in the tools it offers."""

    client: list[ToolDefinition] = field(default_factory=list)
    functions: dict[str, FunctionName] = field(default_factory=dict)
    mcp: list[McpTool] = field(default_factory=list)
    ignored: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def exposed_name(self, name: str, namespace: str | None = None) -> str:
        """The name the model knows a client function by."""
        for exposed, function in self.functions.items():
            if function.name == name and function.namespace == namespace:
                return exposed
        return name


def read_tools(written: list[Any]) -> RequestTools:
    """The request's tools (those of `additional_tools` input items included)."""
    tools = RequestTools()
    functions: list[tuple[dict[str, Any], str | None]] = []
    for index, tool in enumerate(written):
        where = f"tools[{index}]"
        kind = tool.get("type") if isinstance(tool, dict) else None
        if not isinstance(kind, str):
            raise RequestError(f'{where} must be an object with a "type"', param="tools")
        if kind in OFFERED:
            functions.append((tool, None))
        elif kind == "namespace":
            namespace = tool.get("name")
            if not isinstance(namespace, str) or not namespace:
                raise RequestError(f"{where} is a namespace without a name", param="tools")
            for inner in as_list(tool.get("tools"), f"{where}.tools"):
                if isinstance(inner, dict) and inner.get("type") in OFFERED:
                    functions.append((inner, namespace))
                else:
                    tools.ignored.append(f"{namespace}.{_kind_name(inner)}")
        elif kind == "mcp":
            tools.mcp.append(parse_mcp_tool(tool, where))
        else:
            tools.ignored.append(_kind_name(tool))
    _add_functions(tools, functions)
    labels = [t.label for t in tools.mcp]
    for label in labels:
        if labels.count(label) > 1:
            raise RequestError(
                f"two mcp tools have server_label {label!r}; labels must be unique",
                param="tools",
            )
    return tools


def _kind_name(tool: object) -> str:
    if not isinstance(tool, dict):
        return "?"
    kind, name = tool.get("type"), tool.get("name")
    return f"{kind} {name}" if isinstance(name, str) else str(kind)


def _add_functions(tools: RequestTools, functions: list[tuple[dict[str, Any], str | None]]) -> None:
    """Functions under the names the model sees: a namespaced one keeps its own name unless
    another tool has it, then it is `namespace.name`."""
    bare = [t.get("name") for t, namespace in functions]
    for index, (tool, namespace) in enumerate(functions):
        where = f"tools[{index}]" if namespace is None else namespace
        custom = tool.get("type") == "custom"
        if custom:
            offered = custom_tool(tool, where)
            definition = offered.definition
            tools.notes += [offered.note] if offered.note else []
        else:
            definition = _function(tool, where)
        exposed = definition.name
        if namespace is not None and bare.count(exposed) > 1:
            exposed = f"{namespace}.{exposed}"
        if exposed in tools.functions:
            raise RequestError(f"tool name {exposed!r} is used twice", param="tools")
        tools.functions[exposed] = FunctionName(definition.name, namespace, custom)
        tools.client.append(
            ToolDefinition(
                exposed, definition.description, definition.parameters, strict=definition.strict
            )
        )


def _function(tool: dict[str, Any], where: str) -> ToolDefinition:
    nested = tool.get("function")
    inner: dict[str, Any] = nested if isinstance(nested, dict) else tool
    name = inner.get("name")
    if not isinstance(name, str) or not name:
        raise RequestError(
            f'{where}: a function tool needs a "name"; write {{"type": "function", "name":'
            ' "...", "parameters": {...}}',
            param="tools",
        )
    parameters = inner.get("parameters")
    if parameters is not None and not isinstance(parameters, dict):
        raise RequestError(
            f"{where}: parameters of {name!r} must be a JSON Schema object", param="tools"
        )
    description = inner.get("description")
    strict = inner.get("strict")
    return ToolDefinition(
        name,
        description if isinstance(description, str) else "",
        parameters or dict(EMPTY_OBJECT_SCHEMA),
        strict=strict if isinstance(strict, bool) else None,
    )


def tool_choice(value: object, tools: RequestTools) -> ToolChoice:
    """Responses' tool_choice as farmhand's (the one place that maps it)."""
    if value is None or value == "auto":
        return AUTO
    if value == "none":
        return NONE
    if value == "required":
        if not tools.client and not tools.mcp:
            raise RequestError(
                'tool_choice "required" needs tools; add the tools the model must choose from',
                param="tool_choice",
            )
        return REQUIRED
    kind = value.get("type") if isinstance(value, dict) else None
    if isinstance(value, dict) and kind in OFFERED and isinstance(value.get("name"), str):
        namespace = value.get("namespace")
        name = tools.exposed_name(value["name"], namespace if isinstance(namespace, str) else None)
        return ToolChoice.tool(name)
    if isinstance(value, dict) and kind == "mcp" and isinstance(value.get("server_label"), str):
        tool = value.get("name")
        if not isinstance(tool, str) or not tool:
            return REQUIRED
        return ToolChoice.tool(f"{value['server_label']}{SEPARATOR}{tool}")
    if isinstance(value, dict) and kind == "allowed_tools":
        return _allowed_tools(value, tools)
    if isinstance(value, dict) and isinstance(kind, str):
        raise RequestError(
            f'tool_choice forces a {kind} tool, which farmhand cannot run; use "auto",'
            ' "required", or {"type": "function", "name": ...}',
            param="tool_choice",
        )
    raise RequestError(
        f'tool_choice {json.dumps(value)} is not valid; use "auto", "none", "required",'
        ' {"type": "function", "name": ...} or {"type": "mcp", "server_label": ...}',
        param="tool_choice",
    )


def _allowed_tools(value: dict[str, Any], tools: RequestTools) -> ToolChoice:
    """Only the listed function and custom tools are offered; mode auto or required."""
    mode = value.get("mode", "auto")
    listed = as_list(value.get("tools"), "tool_choice.tools")
    if mode not in ("auto", "required"):
        raise RequestError('tool_choice.mode must be "auto" or "required"', param="tool_choice")
    names = {
        tools.exposed_name(t["name"], t.get("namespace"))
        for t in listed
        if isinstance(t, dict) and t.get("type") in OFFERED and isinstance(t.get("name"), str)
    }
    tools.client = [t for t in tools.client if t.name in names]
    return REQUIRED if mode == "required" else AUTO


def as_list(value: object, param: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise RequestError(f"{param} must be a list", param=param.split("[")[0])
    return value
