"""The toolset contract: what the loop can list and call."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from farmhand.messages import Message
from farmhand.tools.definition import ToolDefinition


@dataclass(frozen=True)
class ToolOutput:
    """The text a tool returned, and whether the tool reported an error."""

    text: str
    is_error: bool = False
    # Set by wrappers that shorten `text` for the model (result capping): the whole output,
    # which the caller still gets in the loop's tool-call records.
    full_text: str | None = None
    # Set by JIT discovery: the result only made tools available, so the model's next step is
    # a call of one of them, not an answer from this text.
    offers_tools: bool = False


@runtime_checkable
class Toolset(Protocol):
    """A source of tools. Names from `list_tools` are the names `call_tool` accepts.

    `call_tool` reports tool-side failures as `ToolOutput(is_error=True)` so the model can
    react; it raises ToolError only when the toolset itself is broken.
    """

    async def list_tools(self) -> list[ToolDefinition]: ...

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> ToolOutput: ...


@runtime_checkable
class ConversationAware(Protocol):
    """A toolset that wants to see the conversation before each model turn (JIT discovery
    ranks the tools it injects by what the user asked)."""

    def note_conversation(self, messages: Sequence[Message]) -> None: ...
