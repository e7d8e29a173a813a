"""The toolset contract: what the loop can list and call."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from farmhand.tools.definition import ToolDefinition


@dataclass(frozen=True)
class ToolOutput:
    """The text a tool returned, and whether the tool reported an error."""

    text: str
    is_error: bool = False


@runtime_checkable
class Toolset(Protocol):
    """A source of tools. Names from `list_tools` are the names `call_tool` accepts.

    `call_tool` reports tool-side failures as `ToolOutput(is_error=True)` so the model can
    react; it raises ToolError only when the toolset itself is broken.
    """

    async def list_tools(self) -> list[ToolDefinition]: ...

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> ToolOutput: ...
