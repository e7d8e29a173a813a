"""The provider contract: stream a model turn as neutral events."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol, runtime_checkable

from farmhand.messages import Message, StreamEvent
from farmhand.tools.choice import AUTO, ToolChoice
from farmhand.tools.definition import ToolDefinition

ResponseFormat = Literal["json"] | dict[str, Any]
"""What an answer must be: any JSON object ("json"), or valid for this JSON Schema."""


@dataclass(frozen=True)
class GenerationSettings:
    """Per-turn sampling and tool options. None means the backend's own default."""

    temperature: float | None = None
    max_tokens: int | None = None
    seed: int | None = None
    stop: tuple[str, ...] = ()
    tool_choice: ToolChoice = AUTO
    parallel_tool_calls: bool = True
    stream: bool = True
    """False when the caller takes the turn whole (a non-streaming API request): a backend
    may then answer in one piece, which costs less to send and read. The events are the
    same either way."""
    top_p: float | None = None
    top_k: int | None = None
    response_format: ResponseFormat | None = None
    think: bool | None = None
    """Reasoning on (True) or off (False) where the model's chat template can switch it
    (`enable_thinking`); None leaves the template's default."""
    template_kwargs: Mapping[str, Any] | None = None
    """Variables for the chat template's render (a request's `chat_template_kwargs`, checked
    by `providers/template_kwargs.py`); the embedded model renders with them, an
    OpenAI-compatible backend is sent them."""


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
