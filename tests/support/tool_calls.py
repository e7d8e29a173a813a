"""Calling MCP tools in tests with one-line success and failure checks."""

from __future__ import annotations

import json
from typing import Any

from mcp import Client
from mcp.types import CallToolResult


def text_of(result: CallToolResult) -> str:
    return result.content[0].text  # type: ignore[union-attr]


class ToolCalls:
    def __init__(self, client: Client) -> None:
        self.client = client

    async def text(self, tool: str, /, **arguments: Any) -> str:
        """The text of a call that must succeed."""
        result = await self.client.call_tool(tool, arguments)
        assert not result.is_error, f"{tool}: {text_of(result)}"
        return text_of(result)

    async def ok(self, tool: str, /, **arguments: Any) -> Any:
        """The JSON result of a call that must succeed."""
        return json.loads(await self.text(tool, **arguments))

    async def error(self, tool: str, /, **arguments: Any) -> str:
        """The message of a call that must fail."""
        result = await self.client.call_tool(tool, arguments)
        assert result.is_error, f"{tool} should have failed: {text_of(result)[:300]}"
        return text_of(result)
