"""Cross-cutting toolset behaviour, as small wrappers around any Toolset."""

from __future__ import annotations

from typing import Any

from farmhand.tools.definition import ToolDefinition
from farmhand.toolsets.base import Toolset, ToolOutput

SEPARATOR = ":"


class PrefixedToolset:
    """Exposes every tool as `prefix:tool`, so tools of different servers cannot collide."""

    def __init__(self, inner: Toolset, prefix: str) -> None:
        self.inner = inner
        self.prefix = prefix

    async def list_tools(self) -> list[ToolDefinition]:
        return [
            ToolDefinition(f"{self.prefix}{SEPARATOR}{t.name}", t.description, t.parameters)
            for t in await self.inner.list_tools()
        ]

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> ToolOutput:
        return await self.inner.call_tool(name.removeprefix(self.prefix + SEPARATOR), arguments)
