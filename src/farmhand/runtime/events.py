"""What the tool loop reports while it runs; the CLI, HTTP API and MCP server render these."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from farmhand.messages import Message, ToolCall, ToolResult, Usage
from farmhand.toolsets.mcp.elicitation import Question

StopReason = Literal["stop", "length", "round_limit", "client_tool_calls"]


@dataclass(frozen=True)
class TurnStarted:
    round: int


@dataclass(frozen=True)
class TextChunk:
    text: str


@dataclass(frozen=True)
class ReasoningChunk:
    text: str


@dataclass(frozen=True)
class ToolCallWriting:
    """A call the model is still writing: the first event of a call has its `id` and
    `name` (as the router resolves it), the rest pieces of its arguments text.
    `for_client`: a tool of the request's own, which the client runs (dialects stream
    these as their own tool-call deltas)."""

    index: int
    id: str
    name: str
    arguments: str
    for_client: bool


@dataclass(frozen=True)
class ToolCallStarted:
    call: ToolCall


@dataclass(frozen=True)
class ToolCallFinished:
    """A call ran: `result` as the model sees it; `full` as the tool returned it (longer
    when the result was cut to the size budget; None from callers that do not say)."""

    call: ToolCall
    result: ToolResult
    full: ToolResult | None = field(default=None, compare=False)


@dataclass(frozen=True)
class InputRequested:
    """A tool call waits for the user: its server asks a question (elicitation) or the
    call needs approval (an `ApprovalGate` asking its approver). Answer with
    `PendingAnswers.answer(id, ...)` (runtime/questions.py); until then, or until the
    answer times out (a decline), the call stands still.

    Not yielded by `run_loop` itself: `QuestionRelay.run` merges it into the loop's events."""

    id: str
    question: Question


@dataclass(frozen=True)
class ToolCallRecord:
    """One executed call and what it returned, in full: `result.content` is never cut to
    the size budget the model's copy is held to (include_tool_results returns these)."""

    call: ToolCall
    result: ToolResult


@dataclass(frozen=True)
class LoopFinished:
    """The loop is done. `answer` is the last turn's text; `messages` the whole history.

    `pending_calls` holds calls the caller must run itself (inline tools farmhand cannot
    execute) when `stop_reason` is "client_tool_calls"; `held_calls` (same stop_reason)
    calls an approval gate without an approver held for the caller to decide on
    (`toolsets.mcp.approval`): they are in the last assistant message, without results.
    `stop_sequence` is the request's stop string that ended the last turn (stop_reason
    "stop"), where the provider can tell (`Finish.stop_sequence`).
    """

    answer: str
    stop_reason: StopReason
    rounds: int
    usage: Usage
    messages: tuple[Message, ...]
    tool_calls: tuple[ToolCallRecord, ...] = ()
    pending_calls: tuple[ToolCall, ...] = field(default=())
    stop_sequence: str | None = None
    held_calls: tuple[ToolCall, ...] = ()


LoopEvent = (
    TurnStarted
    | TextChunk
    | ReasoningChunk
    | ToolCallWriting
    | ToolCallStarted
    | ToolCallFinished
    | LoopFinished
)
"""What `run_loop` yields."""

PausingEvent = LoopEvent | InputRequested
"""What a loop run through `QuestionRelay` yields: the loop's events, and its questions."""
