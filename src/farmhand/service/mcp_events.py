"""What a chat with the Responses API's `mcp` tools says beyond the loop's own events
(`service.mcp_chat`), and what a paused chat's reader gets (`service.parked`).

Kept apart from the chat itself so that the runner, which the service's state holds, can
name these events without importing the chat (and through it the state again).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeAlias

from farmhand.messages import ToolCall, ToolResult
from farmhand.runtime.events import InputRequested, LoopEvent
from farmhand.tools.definition import SEPARATOR, ToolDefinition


@dataclass(frozen=True)
class McpToolsListed:
    label: str
    tools: tuple[ToolDefinition, ...]


@dataclass(frozen=True)
class McpCallDone:
    """A call that ran: `result` as the model saw it, `full` as the tool returned it.
    `approval_id` is set when it ran because the client approved it."""

    call: ToolCall
    result: ToolResult
    full: ToolResult
    approval_id: str | None = None

    @property
    def label(self) -> str:
        return split_name(self.call.name)[0]


@dataclass(frozen=True)
class McpApprovalNeeded:
    """A call held until the client approves it (the run ends after these)."""

    call: ToolCall


McpChatEvent: TypeAlias = LoopEvent | McpToolsListed | McpCallDone | McpApprovalNeeded
ChatEvent: TypeAlias = McpChatEvent | InputRequested
"""What a chat run in the service's runner says: its events, and the questions it asks."""


def split_name(name: str) -> tuple[str, str]:
    """(label, tool) of an exposed `label:tool` name."""
    label, _, tool = name.partition(SEPARATOR)
    return label, tool
