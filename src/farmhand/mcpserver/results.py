"""How farmhand's MCP servers answer: one shape for success and one for failure.

Success is `{content: [{type: "text", text: <the result as indented JSON>}]}` (text as it is
for a result that is text already, like Prometheus metrics); failure, a FarmhandError raised
by the tool, is `isError: true` with `Error: <what went wrong and what to do>`. Arguments
that do not fit a tool's schema are answered the same way, naming each field and the
problem, instead of the SDK's "Error executing tool ..." text with pydantic's links in it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from mcp import types
from mcp.server.lowlevel.helper_types import ReadResourceContents
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceNotFoundError, ToolError, UnexpectedToolError
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import AnyUrl, ValidationError

from farmhand.errors import FarmhandError
from farmhand.tools.preview import preview
from farmhand.version import farmhand_version

RESOURCE_NOT_FOUND = -32002
"""The 2025-11-25 spec's code for an unknown resource (retired in 2026-07-28: -32602)."""


def ok(result: Any) -> types.CallToolResult:
    text = result if isinstance(result, str) else json.dumps(result, indent=2, ensure_ascii=False)
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)])


def failed(message: str) -> types.CallToolResult:
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=f"Error: {message}")], is_error=True
    )


def invalid_arguments(tool: str, error: ValidationError) -> str:
    """`Invalid arguments for TOOL: field: problem; other.field: problem`."""
    problems = []
    for item in error.errors(include_url=False):
        where = ".".join(str(part) for part in item["loc"]) or "(arguments)"
        got = "" if item["type"] == "missing" else f" (got {preview(item.get('input'), 60)})"
        problems.append(f"{where}: {item['msg']}{got}")
    return f"Invalid arguments for {tool}: " + "; ".join(problems)


class ToolServer(MCPServer):
    """MCPServer whose argument-validation errors name the field and the problem plainly,
    and where a FarmhandError a tool raises is its answer: `Error: <its message>` (the SDK
    would hide it behind "Error executing tool NAME" and log it as a crash).

    It names its version in serverInfo, and answers an unknown prompt or resource with the
    spec's error codes (the SDK sends code 0 for a prompt, -32602 for a resource)."""

    def __init__(self, name: str, **settings: Any) -> None:
        settings.setdefault("version", farmhand_version())
        super().__init__(name, **settings)

    async def get_prompt(
        self,
        name: str,
        arguments: dict[str, Any] | None = None,
        context: Context[Any, Any] | None = None,
    ) -> types.GetPromptResult | types.InputRequiredResult:
        if name not in {prompt.name for prompt in await self.list_prompts()}:
            raise MCPError(code=types.INVALID_PARAMS, message=f"Unknown prompt: {name}")
        return await super().get_prompt(name, arguments, context)

    async def read_resource(
        self, uri: AnyUrl | str, context: Context[Any, Any] | None = None
    ) -> Iterable[ReadResourceContents] | types.InputRequiredResult:
        try:
            return await super().read_resource(uri, context)
        except ResourceNotFoundError as exc:
            version = context.protocol_version if context is not None else None
            if version in MODERN_PROTOCOL_VERSIONS:
                raise
            raise MCPError(RESOURCE_NOT_FOUND, str(exc), {"uri": str(uri)}) from exc

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> types.CallToolResult | types.InputRequiredResult:
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            cause = exc.__cause__
            if isinstance(cause, ValidationError):
                return failed(invalid_arguments(name, cause))
            if isinstance(exc, UnexpectedToolError) and isinstance(cause, FarmhandError):
                return failed(str(cause))
            raise
