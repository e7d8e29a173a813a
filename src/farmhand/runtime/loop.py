"""The tool loop: model turn -> tool calls -> results -> next turn, until an answer."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Sequence

import anyio

from farmhand.messages import (
    Finish,
    Message,
    ReasoningDelta,
    TextDelta,
    ToolCall,
    ToolCallEvent,
    ToolResult,
    Usage,
)
from farmhand.providers.base import GenerationSettings, Provider
from farmhand.runtime.events import (
    LoopEvent,
    LoopFinished,
    ReasoningChunk,
    TextChunk,
    ToolCallFinished,
    ToolCallRecord,
    ToolCallStarted,
    TurnStarted,
)
from farmhand.runtime.executor import ToolRouter

DEFAULT_MAX_TOOL_ROUNDS = 10


async def run_loop(
    provider: Provider,
    messages: Sequence[Message],
    router: ToolRouter,
    settings: GenerationSettings = GenerationSettings(),
    *,
    max_tool_rounds: int = DEFAULT_MAX_TOOL_ROUNDS,
) -> AsyncIterator[LoopEvent]:
    """Run the conversation until the model answers without calling tools.

    A round is one model turn whose tool calls were run. After `max_tool_rounds` rounds a
    turn that still calls tools ends the loop with stop_reason "round_limit".
    """
    history = list(messages)
    tools = await router.list_tools()
    usage = Usage()
    records: list[ToolCallRecord] = []
    turn = 0
    while True:
        turn += 1
        yield TurnStarted(turn)
        text: list[str] = []
        calls: list[ToolCall] = []
        finish_reason = "stop"
        async for event in provider.stream(history, tools, settings):
            if isinstance(event, TextDelta):
                text.append(event.text)
                yield TextChunk(event.text)
            elif isinstance(event, ReasoningDelta):
                yield ReasoningChunk(event.text)
            elif isinstance(event, ToolCallEvent):
                calls.append(_canonical(event.call, router))
            elif isinstance(event, Finish):
                usage += event.usage
                finish_reason = event.reason
        if not settings.parallel_tool_calls:
            calls = calls[:1]
        answer = "".join(text)
        history.append(Message.assistant(answer, tuple(calls)))
        rounds = turn - 1

        def finished(reason: str, pending: Sequence[ToolCall] = ()) -> LoopFinished:
            return LoopFinished(
                answer=answer,
                stop_reason=reason,  # type: ignore[arg-type]
                rounds=rounds,
                usage=usage,
                messages=tuple(history),
                tool_calls=tuple(records),
                pending_calls=tuple(pending),
            )

        if not calls:
            yield finished("length" if finish_reason == "length" else "stop")
            return
        if rounds >= max_tool_rounds:
            yield finished("round_limit")
            return

        client_calls = [c for c in calls if router.is_client_tool(c.name)]
        server_calls = [c for c in calls if not router.is_client_tool(c.name)]
        for call in server_calls:
            yield ToolCallStarted(call)
        results = await _execute_all(router, server_calls)
        for call, result in zip(server_calls, results, strict=True):
            records.append(ToolCallRecord(call, result))
            history.append(Message.tool(result))
            yield ToolCallFinished(call, result)
        if client_calls:
            rounds += 1
            yield finished("client_tool_calls", client_calls)
            return


def _canonical(call: ToolCall, router: ToolRouter) -> ToolCall:
    """Give a call the tool's full exposed name, so history and results agree."""
    name = router.resolve(call.name)
    return dataclasses.replace(call, name=name) if name and name != call.name else call


async def _execute_all(router: ToolRouter, calls: Sequence[ToolCall]) -> list[ToolResult]:
    """Run every call of a turn concurrently; results keep the calls' order."""
    results: list[ToolResult | None] = [None] * len(calls)

    async def run(index: int, call: ToolCall) -> None:
        results[index] = await router.execute(call)

    async with anyio.create_task_group() as group:
        for index, call in enumerate(calls):
            group.start_soon(run, index, call)
    return [r for r in results if r is not None]


async def run_to_completion(
    provider: Provider,
    messages: Sequence[Message],
    router: ToolRouter,
    settings: GenerationSettings = GenerationSettings(),
    *,
    max_tool_rounds: int = DEFAULT_MAX_TOOL_ROUNDS,
) -> LoopFinished:
    """`run_loop` without the progress events."""
    async for event in run_loop(
        provider, messages, router, settings, max_tool_rounds=max_tool_rounds
    ):
        if isinstance(event, LoopFinished):
            return event
    raise AssertionError("run_loop ended without LoopFinished")
