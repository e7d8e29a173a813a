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
