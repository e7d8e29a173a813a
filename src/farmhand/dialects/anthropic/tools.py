"""The `tools` of an Anthropic Messages request: custom tools, Anthropic-defined tools the
client runs, and server tools farmhand cannot run.

- A custom tool (`input_schema`) is offered as it is.
- An Anthropic-defined client tool (`bash_*`, `text_editor_*`) has no `input_schema`: the
  client runs it, and its input shape is fixed by Anthropic. Agents built for Claude send
  these, so each is offered with that documented shape, under the name the client gave.
- A server tool (`web_search_*`, `web_fetch_*`, `code_execution_*`, `computer_*`, ...)
  would run on Anthropic's side. It is left out, never a 400, and its name is listed in
  `ignored` so the response can say so (a header, `x-farmhand-ignored-tools`).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from farmhand.errors import ConfigError, RequestError
from farmhand.tools.definition import ToolDefinition
from farmhand.tools.formats.anthropic import tools_from_anthropic

IGNORED_TOOLS_HEADER = "x-farmhand-ignored-tools"

_TEXT = {"type": "string"}
_BASH_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "command": {**_TEXT, "description": "The shell command to run."},
        "restart": {"type": "boolean", "description": "Restart the shell instead."},
    },
}
_EDITOR_COMMANDS = ["view", "create", "str_replace", "insert"]


def _editor_schema(commands: list[str]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "command": {"type": "string", "enum": commands},
            "path": {**_TEXT, "description": "The file or folder to act on."},
            "file_text": {**_TEXT, "description": "create: the new file's content."},
            "old_str": {**_TEXT, "description": "str_replace: the exact text to replace."},
            "new_str": {**_TEXT, "description": "str_replace, insert: the new text."},
            "insert_line": {"type": "integer", "description": "insert: after this line."},
            "view_range": {
                "type": "array",
                "items": {"type": "integer"},
                "description": "view: first and last line (-1: to the end).",
            },
        },
        "required": ["command", "path"],
    }


# Type prefix -> (description, input schema); the version suffix (`_20250124`) varies.
_CLIENT_TOOLS: dict[str, tuple[str, dict[str, Any]]] = {
    "bash_": ("Run a command in a persistent bash shell.", _BASH_SCHEMA),
    "text_editor_": (
        "View, create and edit text files.",
        _editor_schema(_EDITOR_COMMANDS),
    ),
}
# Older editor versions also undo.
_UNDOING_EDITORS = ("text_editor_20241022", "text_editor_20250124")


@dataclass
class AnthropicTools:
    definitions: list[ToolDefinition] = field(default_factory=list)
    ignored: list[str] = field(default_factory=list)
    """Server tools left out, by name (or type when unnamed)."""


def read_tools(value: object) -> AnthropicTools:
    if value is None:
        return AnthropicTools()
    if not isinstance(value, list):
        raise RequestError("tools must be a list of tools with input_schema", param="tools")
    read = AnthropicTools()
    for i, tool in enumerate(value):
        kind = tool.get("type") if isinstance(tool, dict) else None
        if kind in (None, "custom"):
            read.definitions.append(_custom(i, tool))
        elif isinstance(kind, str) and (defined := _client_tool(i, tool, kind)) is not None:
            read.definitions.append(defined)
        else:
            name = tool.get("name") if isinstance(tool, dict) else None
            read.ignored.append(str(name or kind))
    seen: set[str] = set()
    for definition in read.definitions:
        if definition.name in seen:
            raise RequestError(f"tool name {definition.name!r} is used twice", param="tools")
        seen.add(definition.name)
    return read


def _custom(i: int, tool: Any) -> ToolDefinition:
    try:
        (converted,) = tools_from_anthropic([tool])
    except ConfigError as exc:
        raise RequestError(f"tools[{i}]: {exc}", param="tools") from None
    return ToolDefinition.from_openai(converted)


def _client_tool(i: int, tool: dict[str, Any], kind: str) -> ToolDefinition | None:
    for prefix, (description, schema) in _CLIENT_TOOLS.items():
        if not kind.startswith(prefix):
            continue
        name = tool.get("name")
        if not isinstance(name, str) or not name:
            raise RequestError(
                f'tools[{i}] ({kind}) needs its "name", as Anthropic defines it', param="tools"
            )
        if kind in _UNDOING_EDITORS:
            schema = _editor_schema([*_EDITOR_COMMANDS, "undo_edit"])
        # A copy per request: the module's schemas must not change with what is done later.
        return ToolDefinition(name, description, copy.deepcopy(schema))
    return None
