"""One completion of a prompt, no tools and no loop (Ollama's `/api/generate`).

The prompt goes through the model's own chat template as one user turn (with an optional
system message) on any backend; `raw` text (a request's own template, rendered by its
dialect, is raw text too) and a `context` (the tokens an earlier generate returned) need
the text itself continued, which only the embedded backend does. An empty prompt only
loads the model (`load` below).
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Sequence
from contextlib import aclosing
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from farmhand.config.models import ModelConfig
from farmhand.errors import RequestError
from farmhand.messages import Message, StreamEvent, TextDelta
from farmhand.providers.base import GenerationSettings, Provider
from farmhand.service.state import ServiceState
from farmhand.tools.definition import ToolDefinition


@dataclass
class GenerateRequest:
    model: str
    prompt: str
    system: str | None = None
    raw: bool = False
    context: list[int] | None = None
    settings: GenerationSettings = field(default_factory=GenerationSettings)


@runtime_checkable
class TextCompleter(Protocol):
    """A backend that continues text as it is and knows its tokens (the embedded one)."""

    def complete(
        self, prompt: str, settings: GenerationSettings
    ) -> AsyncGenerator[StreamEvent, None]: ...

    def tokenize(self, text: str) -> list[int]: ...

    def text_of(self, tokens: Sequence[int]) -> str: ...

    def render(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolDefinition],
        *,
        think: bool | None = None,
    ) -> str: ...


@dataclass
class Generation:
    """What a generate produced besides its events: the text it continued (for `context`,
    where the backend has tokens)."""

    prompt_text: str | None = None
    completer: TextCompleter | None = None
    answer: list[str] = field(default_factory=list)

    def context(self) -> list[int] | None:
        """The tokens of prompt and answer, for the next request's `context`."""
        if self.completer is None or self.prompt_text is None:
            return None
        return self.completer.tokenize(self.prompt_text + "".join(self.answer))


async def load(state: ServiceState, name: str | None) -> ModelConfig:
    """Build the model's provider now (Ollama loads on an empty prompt)."""
    model = state.model_config(name)
    await state.provider(model)
    return model


def completer_of(provider: Provider) -> TextCompleter | None:
    """The text-continuing backend behind `provider` (a prompt-based wrapper holds one)."""
    inner = getattr(provider, "inner", provider)
    return inner if isinstance(inner, TextCompleter) else None


async def generate(
    state: ServiceState, request: GenerateRequest, generation: Generation
) -> AsyncGenerator[StreamEvent, None]:
    """The events of one completion (text deltas, reasoning, then Finish); the answer and
    the prompt's text are noted in `generation`."""
    model = state.model_config(request.model)
    provider = await state.provider(model)
    completer = completer_of(provider)
    needs_text = request.raw or bool(request.context)
    if needs_text and completer is None:
        what = "raw (or template)" if request.raw else "context"
        raise RequestError(
            f"{what} needs the embedded model (it continues the text itself); model"
            f" {model.name!r} runs on the {model.provider} backend: send the prompt alone,"
            " or use a llamacpp model",
            param="raw" if request.raw else "context",
        )
    messages = [Message.user(request.prompt)]
    if request.system:
        messages.insert(0, Message.system(request.system))
    generation.completer = completer
    if not needs_text:
        if completer is not None:
            generation.prompt_text = completer.render(messages, [], think=request.settings.think)
        events = provider.stream(messages, [], request.settings)
    else:
        assert completer is not None
        text = _prompt_text(request, completer, messages)
        generation.prompt_text = text
        events = completer.complete(text, request.settings)
    async with aclosing(events):
        async for event in events:
            if isinstance(event, TextDelta):
                generation.answer.append(event.text)
            yield event


def _prompt_text(
    request: GenerateRequest, completer: TextCompleter, messages: list[Message]
) -> str:
    if request.raw:
        text = request.prompt
    else:
        text = completer.render(messages, [], think=request.settings.think)
    if request.context:
        text = completer.text_of(request.context) + text
    return text
