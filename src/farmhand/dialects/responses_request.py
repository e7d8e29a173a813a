"""An OpenAI Responses request body (`POST /v1/responses`) -> a `ResponsesRequest`, or a
RequestError saying what to fix (400, `param` naming the field).

Tools: function tools in Responses' flat shape (`{"type": "function", "name",
"parameters", "strict"}`), the functions inside a `namespace` tool (Codex sends one), and
`mcp` tools, which become servers of farmhand's own MCP client under the request policy
(`service.mcp_tools`). Hosted tools farmhand cannot run (`web_search`, `file_search`,
`code_interpreter`, `computer_use_preview`, `image_generation`, `local_shell`, custom
tools, ...) are left out and named in the response's `farmhand.ignored_tools`: clients
such as Codex always send some. Parameters farmhand reads but cannot honour (`top_p`, a
JSON `text.format`) are echoed and noted the same way. The input items themselves are
read by `dialects.responses_items`, once the conversation they continue is known.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from farmhand.config.models import McpServerConfig
from farmhand.dialects.responses_mcp import parse_mcp_tool
from farmhand.errors import RequestError
from farmhand.providers.base import GenerationSettings
from farmhand.service.mcp_servers import parse_mcp_servers
from farmhand.service.mcp_tools import McpTool
from farmhand.tools.choice import AUTO, NONE, REQUIRED, ToolChoice
from farmhand.tools.definition import EMPTY_OBJECT_SCHEMA, ToolDefinition

REFUSED = {
    "background": "background responses are not supported; send the request without it",
    "conversation": "conversation objects are not supported; continue a response with"
    " previous_response_id instead",
    "prompt": "prompt templates are not supported; send instructions and input instead",
}
ECHOED = ("instructions", "metadata", "temperature", "top_p", "max_output_tokens", "text")


@dataclass(frozen=True)
class FunctionName:
    """A client function as the client named it: `namespace` set for one inside a
    namespace tool (the model sees `exposed`, unique among the request's tools)."""

    name: str
    namespace: str | None = None


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
    client_tools: list[ToolDefinition]
    functions: dict[str, FunctionName]  # exposed name -> the client's name
    mcp_tools: list[McpTool]
    mcp_servers: list[McpServerConfig | str]
    max_tool_rounds: int | None
    echo: dict[str, Any]  # request fields a Response object repeats
    ignored_tools: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def exposed_name(self, name: str, namespace: str | None = None) -> str:
        """The name the model knows a client function by."""
        for exposed, function in self.functions.items():
            if function.name == name and function.namespace == namespace:
                return exposed
        return name


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
    tools = [*_list(body.get("tools"), "tools"), *_additional_tools(items)]
    parsed = ResponsesRequest(
        model=model,
        stream=_flag(body, "stream", False),
        store=_flag(body, "store", True),
        previous_response_id=previous,
        instructions=instructions,
        input_items=items,
        settings=GenerationSettings(),
        client_tools=[],
        functions={},
        mcp_tools=[],
        mcp_servers=parse_mcp_servers(body.get("mcp_servers")),
        max_tool_rounds=_integer(body, "max_tool_rounds"),
        echo={key: body.get(key) for key in ECHOED},
    )
    _read_tools(parsed, tools)
    parsed.settings = GenerationSettings(
        temperature=_number(body, "temperature", minimum=0, maximum=2),
        max_tokens=_integer(body, "max_output_tokens"),
        tool_choice=_tool_choice(body.get("tool_choice"), parsed),
        parallel_tool_calls=_flag(body, "parallel_tool_calls", True),
    )
    if _number(body, "top_p", minimum=0, maximum=1) is not None:
        parsed.notes.append("top_p is not applied; farmhand samples with temperature only")
    _check_text(body.get("text"), parsed)
    return parsed


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


def _additional_tools(items: list[dict[str, Any]]) -> list[Any]:
    """Tools that arrive as an input item (Codex's `additional_tools` for newer models)."""
    found: list[Any] = []
    for index, item in enumerate(items):
        if item.get("type") == "additional_tools":
            found += _list(item.get("tools"), f"input[{index}].tools")
    return found


def _read_tools(parsed: ResponsesRequest, tools: list[Any]) -> None:
    functions: list[tuple[dict[str, Any], str | None]] = []
    for index, tool in enumerate(tools):
        where = f"tools[{index}]"
        kind = tool.get("type") if isinstance(tool, dict) else None
        if not isinstance(kind, str):
            raise RequestError(f'{where} must be an object with a "type"', param="tools")
        if kind == "function":
            functions.append((tool, None))
        elif kind == "namespace":
            namespace = tool.get("name")
            if not isinstance(namespace, str) or not namespace:
                raise RequestError(f"{where} is a namespace without a name", param="tools")
            for inner in _list(tool.get("tools"), f"{where}.tools"):
                if isinstance(inner, dict) and inner.get("type") == "function":
                    functions.append((inner, namespace))
                else:
                    parsed.ignored_tools.append(f"{namespace}.{_kind_name(inner)}")
        elif kind == "mcp":
            parsed.mcp_tools.append(parse_mcp_tool(tool, where))
        else:
            parsed.ignored_tools.append(_kind_name(tool))
    _add_functions(parsed, functions)
    labels = [t.label for t in parsed.mcp_tools]
    for label in labels:
        if labels.count(label) > 1:
            raise RequestError(
                f"two mcp tools have server_label {label!r}; labels must be unique",
                param="tools",
            )


def _kind_name(tool: object) -> str:
    if not isinstance(tool, dict):
        return "?"
    kind, name = tool.get("type"), tool.get("name")
    return f"{kind} {name}" if isinstance(name, str) else str(kind)


def _add_functions(
    parsed: ResponsesRequest, functions: list[tuple[dict[str, Any], str | None]]
) -> None:
    """Functions under the names the model sees: a namespaced one keeps its own name unless
    another tool has it, then it is `namespace.name`."""
    bare = [t.get("name") for t, namespace in functions]
    for index, (tool, namespace) in enumerate(functions):
        definition = _function(tool, f"tools[{index}]" if namespace is None else namespace)
        exposed = definition.name
        if namespace is not None and bare.count(exposed) > 1:
            exposed = f"{namespace}.{exposed}"
        if exposed in parsed.functions:
            raise RequestError(f"tool name {exposed!r} is used twice", param="tools")
        parsed.functions[exposed] = FunctionName(definition.name, namespace)
        parsed.client_tools.append(
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


def _tool_choice(value: object, parsed: ResponsesRequest) -> ToolChoice:
    """Responses' tool_choice as farmhand's (the one place that maps it)."""
    if value is None or value == "auto":
        return AUTO
    if value == "none":
        return NONE
    if value == "required":
        if not parsed.client_tools and not parsed.mcp_tools:
            raise RequestError(
                'tool_choice "required" needs tools; add the tools the model must choose from',
                param="tool_choice",
            )
        return REQUIRED
    kind = value.get("type") if isinstance(value, dict) else None
    if isinstance(value, dict) and kind == "function" and isinstance(value.get("name"), str):
        namespace = value.get("namespace")
        name = parsed.exposed_name(value["name"], namespace if isinstance(namespace, str) else None)
        return ToolChoice.tool(name)
    if isinstance(value, dict) and kind == "mcp" and isinstance(value.get("server_label"), str):
        tool = value.get("name")
        if not isinstance(tool, str) or not tool:
            return REQUIRED
        return ToolChoice.tool(f"{value['server_label']}:{tool}")
    if isinstance(value, dict) and kind == "allowed_tools":
        return _allowed_tools(value, parsed)
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


def _allowed_tools(value: dict[str, Any], parsed: ResponsesRequest) -> ToolChoice:
    """Only the listed function tools are offered; mode auto or required."""
    mode = value.get("mode", "auto")
    listed = _list(value.get("tools"), "tool_choice.tools")
    if mode not in ("auto", "required"):
        raise RequestError('tool_choice.mode must be "auto" or "required"', param="tool_choice")
    names = {
        parsed.exposed_name(t["name"], t.get("namespace"))
        for t in listed
        if isinstance(t, dict) and t.get("type") == "function" and isinstance(t.get("name"), str)
    }
    parsed.client_tools = [t for t in parsed.client_tools if t.name in names]
    return REQUIRED if mode == "required" else AUTO


def _check_text(value: object, parsed: ResponsesRequest) -> None:
    if value is None:
        return
    if not isinstance(value, dict):
        raise RequestError(
            'text must be an object such as {"format": {"type": "text"}}', param="text"
        )
    form = value.get("format")
    if isinstance(form, dict) and form.get("type") not in (None, "text"):
        parsed.notes.append(
            f"text.format {form.get('type')} is not enforced; the answer is plain text"
        )


def _list(value: object, param: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise RequestError(f"{param} must be a list", param=param.split("[")[0])
    return value


def _flag(body: dict[str, Any], key: str, default: bool) -> bool:
    value = body.get(key)
    if value is None:
        return default
    if not isinstance(value, bool):
        raise RequestError(f"{key} must be true or false", param=key)
    return value


def _integer(body: dict[str, Any], key: str) -> int | None:
    value = body.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise RequestError(f"{key} must be a positive integer", param=key)
    return value


def _number(body: dict[str, Any], key: str, *, minimum: float, maximum: float) -> float | None:
    value = body.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise RequestError(f"{key} must be a number", param=key)
    if not minimum <= value <= maximum:
        raise RequestError(f"{key} must be between {minimum:g} and {maximum:g}", param=key)
    return float(value)
