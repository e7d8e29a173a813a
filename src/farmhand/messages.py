"""The provider-neutral message model.

Every provider converts to and from these immutable values at its edge, so the runtime,
the CLI and the servers never handle a provider's own dicts.
"""

from __future__ import annotations

import json
import secrets
from dataclasses import dataclass, field
from typing import Any, Literal

Role = Literal["system", "user", "assistant", "tool"]


def new_call_id() -> str:
    return "call_" + secrets.token_hex(12)


@dataclass(frozen=True)
class ToolCall:
    """A request from the model to run one tool."""

    name: str
    arguments: dict[str, Any]
    id: str = field(default_factory=new_call_id)
    # Set when the model wrote a call that could not be read (bad JSON, arguments not an
    # object). The loop does not run such a call: it sends this text back as the result.
    parse_error: str | None = None

    def arguments_json(self) -> str:
        return json.dumps(self.arguments, ensure_ascii=False)

    def key(self) -> str:
        """Same tool, same arguments: the same key (argument order does not matter)."""
        arguments = json.dumps(self.arguments, sort_keys=True, ensure_ascii=False)
        return f"{self.name}\0{arguments}"


@dataclass(frozen=True)
class ToolResult:
    """What running a tool produced, addressed to the call that asked for it."""

    call_id: str
    name: str
    content: str
    is_error: bool = False


@dataclass(frozen=True)
class Message:
    """One turn of a conversation.

    `tool_calls` is set on assistant turns that call tools; `tool_call_id` and `name` on
    tool turns, which carry a tool's result in `content`.
    """

    role: Role
    content: str = ""
    reasoning: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    name: str | None = None
    # On tool turns: the tool reported a failure (a model may need to call again).
    is_error: bool = False

    @classmethod
    def system(cls, content: str) -> Message:
        return cls("system", content)

    @classmethod
    def user(cls, content: str) -> Message:
        return cls("user", content)

    @classmethod
    def assistant(cls, content: str = "", tool_calls: tuple[ToolCall, ...] = ()) -> Message:
        return cls("assistant", content, tool_calls=tool_calls)

    @classmethod
    def tool(cls, result: ToolResult) -> Message:
        return cls(
            "tool",
            result.content,
            tool_call_id=result.call_id,
            name=result.name,
            is_error=result.is_error,
        )


@dataclass(frozen=True)
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
        )


# Stream events: what a provider yields while the model writes.


@dataclass(frozen=True)
class TextDelta:
    text: str


@dataclass(frozen=True)
class ReasoningDelta:
    text: str


@dataclass(frozen=True)
class ToolCallEvent:
    """A complete, parsed tool call."""

    call: ToolCall


@dataclass(frozen=True)
class ToolCallDelta:
    """A tool call still being written: `name` (and `id`) in its first delta, then pieces of
    its arguments text as they become certain. A ToolCallEvent with the whole call follows;
    consumers that only run calls can ignore these."""

    index: int
    name: str = ""
    arguments: str = ""
    id: str = ""


@dataclass(frozen=True)
class Finish:
    """The model turn ended. `reason` is stop, length or tool_calls.

    `stop_sequence`: which of the request's stop strings ended the turn (reason "stop"),
    where the provider can tell. The embedded model's provider cuts the text itself and
    knows; an OpenAI-compatible backend says "stop" for a stop string and for the end of
    the turn alike, and leaves the string out of the text, so its turns leave it None
    (except vLLM's, which names the string in `stop_reason`)."""

    reason: str
    usage: Usage = Usage()
    stop_sequence: str | None = None


StreamEvent = TextDelta | ReasoningDelta | ToolCallDelta | ToolCallEvent | Finish
