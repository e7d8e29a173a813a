"""Per-turn generation settings, in no API's wire shape and no backend's."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from farmhand.tools.choice import AUTO, ToolChoice

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
    by `generation/template_kwargs.py`); the embedded model renders with them, an
    OpenAI-compatible backend is sent them."""
