"""Counting a prompt's tokens with the model's own tokenizer, for the providers that can.

A provider that can render its prompt and tokenize it locally (the embedded model) has a
`count_tokens(messages, tools)` method; a remote OpenAI-compatible backend cannot tell how
its server would render the conversation, so it has none, and `count_tokens` says so.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from farmhand.errors import RequestError
from farmhand.messages import Message
from farmhand.tools.definition import ToolDefinition


@runtime_checkable
class TokenCounter(Protocol):
    async def count_tokens(
        self, messages: Sequence[Message], tools: Sequence[ToolDefinition]
    ) -> int:
        """The tokens of the prompt these messages and tools render to."""
        ...


async def count_tokens(
    provider: object, messages: Sequence[Message], tools: Sequence[ToolDefinition]
) -> int:
    """`provider`'s count; RequestError (400) when its backend cannot count."""
    if not isinstance(provider, TokenCounter):
        backend = getattr(provider, "name", type(provider).__name__)
        raise RequestError(
            f"this model's backend ({backend}) cannot count tokens: only the embedded"
            " (llamacpp) models render and tokenize prompts locally; count with one of those",
            code="count_tokens_unsupported",
        )
    return await provider.count_tokens(messages, tools)
