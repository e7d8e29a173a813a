"""The provider contract: stream a model turn as neutral events.

`GenerationSettings` and `ResponseFormat` live in `farmhand.generation.settings` (dialects
build them without importing providers); they are re-exported here."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Sequence
from typing import Protocol, runtime_checkable

from farmhand.generation.settings import GenerationSettings, ResponseFormat
from farmhand.messages import Message, StreamEvent
from farmhand.tools.definition import ToolDefinition

__all__ = ["GenerationSettings", "Provider", "ResponseFormat"]


@runtime_checkable
class Provider(Protocol):
    """A model backend.

    `stream` yields TextDelta / ReasoningDelta as the model writes, a ToolCallEvent for each
    complete tool call, and exactly one Finish last. Failures raise ProviderError.
    """

    name: str

    def stream(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolDefinition],
        settings: GenerationSettings,
    ) -> AsyncGenerator[StreamEvent, None]: ...

    async def aclose(self) -> None: ...


@runtime_checkable
class GrammarTarget(Protocol):
    """A provider that can constrain a turn to calls of tools it does not render itself.

    `stream(..., grammar_tools=T)` samples under the grammar for T (per tool_choice, as for
    tools it renders) and reads `<tool_call>` blocks naming T back as calls. The prompt-based
    strategy uses it: it describes the tools in the system prompt and passes `tools=[]`.
    `accepts_grammar_tools` is what tells such a provider apart (isinstance checks members).
    """

    name: str
    accepts_grammar_tools: bool

    def stream(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolDefinition],
        settings: GenerationSettings,
        *,
        grammar_tools: Sequence[ToolDefinition] | None = None,
    ) -> AsyncGenerator[StreamEvent, None]: ...

    async def aclose(self) -> None: ...
