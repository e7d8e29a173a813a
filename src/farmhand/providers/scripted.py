"""ScriptedProvider: the test double. Plays canned model turns, one Step per turn.

    def saw_tools(messages, tools):
        assert [t.name for t in tools] == ["fs:read"]

    provider = ScriptedProvider([
        Step.calls(ToolCall("fs:read", {"path": "a.txt"}), expect=saw_tools),
        Step.text("The file says hello."),
    ])
    ...  # run the loop
    provider.assert_done()

A turn nobody scripted is a ProviderError; a scripted turn nobody asked for fails
`assert_done()`. Both name the step, so a broken test says what the loop did differently.
"""

from __future__ import annotations

import re
from collections.abc import AsyncGenerator, Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from farmhand.errors import ProviderError
from farmhand.messages import (
    Finish,
    Message,
    ReasoningDelta,
    StreamEvent,
    TextDelta,
    ToolCall,
    ToolCallEvent,
    Usage,
)
from farmhand.providers.base import GenerationSettings
from farmhand.tools.definition import ToolDefinition

Expectation = Callable[[Sequence[Message], Sequence[ToolDefinition]], None]
"""Called with what a turn received; raise (assert) to fail the test."""

_NO_USAGE = Usage()


def _chunks(text: str) -> list[str]:
    # Word-sized pieces (each keeps its trailing space) so consumers see a real stream,
    # and "".join(pieces) == text.
    return [piece for piece in re.split(r"(?<=\s)(?=\S)", text) if piece]


@dataclass(frozen=True)
class Step:
    """One model turn: the events to stream, or the exception to raise instead.

    A missing Finish is appended (reason "tool_calls" if the turn has calls, else "stop").
    """

    events: tuple[StreamEvent, ...] = ()
    raises: Exception | None = None
    expect: Expectation | None = None

    def __post_init__(self) -> None:
        events = tuple(self.events)
        finishes = [i for i, event in enumerate(events) if isinstance(event, Finish)]
        if finishes and finishes != [len(events) - 1]:
            raise ValueError("a step may hold one Finish, and only as its last event")
        if not finishes:
            has_calls = any(isinstance(event, ToolCallEvent) for event in events)
            events += (Finish("tool_calls" if has_calls else "stop"),)
        object.__setattr__(self, "events", events)

    @classmethod
    def text(
        cls,
        text: str,
        *,
        reasoning: str = "",
        usage: Usage = _NO_USAGE,
        expect: Expectation | None = None,
    ) -> Step:
        """A plain answer, streamed in a few TextDelta chunks, then Finish("stop")."""
        events: list[StreamEvent] = [ReasoningDelta(p) for p in _chunks(reasoning)]
        events += [TextDelta(piece) for piece in _chunks(text)]
        return cls((*events, Finish("stop", usage)), expect=expect)

    @classmethod
    def calls(
        cls,
        *calls: ToolCall,
        text: str = "",
        reasoning: str = "",
        usage: Usage = _NO_USAGE,
        expect: Expectation | None = None,
    ) -> Step:
        """Optional text, then one ToolCallEvent per call, then Finish("tool_calls")."""
        if not calls:
            raise ValueError("Step.calls needs at least one ToolCall")
        events: list[StreamEvent] = [ReasoningDelta(p) for p in _chunks(reasoning)]
        events += [TextDelta(piece) for piece in _chunks(text)]
        events += [ToolCallEvent(call) for call in calls]
        return cls((*events, Finish("tool_calls", usage)), expect=expect)

    @classmethod
    def fail(cls, error: Exception, *, expect: Expectation | None = None) -> Step:
        """A turn whose stream() raises `error` (e.g. a ProviderError) before any event."""
        return cls(raises=error, expect=expect)

    def describe(self) -> str:
        if self.raises is not None:
            return f"raise {self.raises!r}"
        text = "".join(e.text for e in self.events if isinstance(e, TextDelta))
        calls = [e.call.name for e in self.events if isinstance(e, ToolCallEvent)]
        parts = [f"text {text[:40]!r}"] if text else []
        parts += [f"calls {', '.join(calls)}"] if calls else []
        return "; ".join(parts) or "empty turn"


ScriptItem = Step | Sequence[StreamEvent] | Exception
"""What a script may hold: a Step, a bare list of events, or an exception to raise."""


def _as_step(item: ScriptItem) -> Step:
    if isinstance(item, Step):
        return item
    if isinstance(item, Exception):
        return Step.fail(item)
    return Step(tuple(item))


class ScriptedRequest(NamedTuple):
    """What one call to stream() received."""

    messages: tuple[Message, ...]
    tools: tuple[ToolDefinition, ...]
    settings: GenerationSettings


class ScriptedProvider:
    """Plays its steps in order, one per call to stream(), and records every request."""

    def __init__(self, steps: Iterable[ScriptItem] = (), name: str = "scripted") -> None:
        self.name = name
        self.steps: list[Step] = [_as_step(item) for item in steps]
        self.requests: list[ScriptedRequest] = []
        self.closed = False

    def add(self, *steps: ScriptItem) -> None:
        """Append steps (a test can script the next turns after seeing the first ones)."""
        self.steps.extend(_as_step(item) for item in steps)

    @property
    def remaining(self) -> list[Step]:
        return self.steps[len(self.requests) :]

    async def stream(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolDefinition],
        settings: GenerationSettings,
    ) -> AsyncGenerator[StreamEvent, None]:
        self.requests.append(ScriptedRequest(tuple(messages), tuple(tools), settings))
        turn = len(self.requests)
        if turn > len(self.steps):
            last = f"{messages[-1].role}: {messages[-1].content[:80]!r}" if messages else "none"
            raise ProviderError(
                f"scripted provider: unexpected model turn {turn}; script has only "
                f"{len(self.steps)} steps (last message of this turn: {last})"
            )
        step = self.steps[turn - 1]
        if step.expect is not None:
            step.expect(messages, tools)
        if step.raises is not None:
            raise step.raises
        for event in step.events:
            yield event

    def assert_done(self) -> None:
        """Fail if some scripted turns were never asked for."""
        used = min(len(self.requests), len(self.steps))
        if used < len(self.steps):
            unused = "; ".join(
                f"step {i} ({step.describe()})"
                for i, step in enumerate(self.steps[used:], start=used + 1)
            )
            raise AssertionError(
                f"scripted provider: {len(self.steps) - used} of {len(self.steps)} steps "
                f"were not used: {unused}"
            )

    async def aclose(self) -> None:
        self.closed = True
