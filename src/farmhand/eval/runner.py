"""Run a suite against one provider: one model turn per case, timed and scored.

A case is one turn, not a tool loop: the model gets the case's conversation and tools and
whatever it writes first is judged, so a model cannot pass by trying again. With JIT
discovery (`jit=True`) the turn starts with `mcp_discover` only; discovery calls are run
(over the case's tools) and the model is asked again, up to `MAX_DISCOVERY_TURNS` times, and
the first turn that is not only discovery is judged. Tokens and seconds add up over them.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import aclosing, asynccontextmanager
from dataclasses import dataclass, replace
from typing import Any

from farmhand.errors import FarmhandError
from farmhand.eval.scoring import ItemResult, TurnOutput, score
from farmhand.eval.suite import EvalCase, Suite
from farmhand.messages import (
    Finish,
    Message,
    TextDelta,
    ToolCall,
    ToolCallEvent,
    ToolResult,
    Usage,
)
from farmhand.providers.base import GenerationSettings, Provider
from farmhand.tools.definition import SEPARATOR, ToolDefinition
from farmhand.toolsets.base import ToolOutput, Toolset
from farmhand.toolsets.mcp.discovery import DISCOVER, DiscoveryToolset, ServerSource

MAX_DISCOVERY_TURNS = 3
DEFAULT_MAX_TOKENS = 256
JIT_SERVER = "suite"

Progress = Callable[[ItemResult], None]


@dataclass(frozen=True)
class RunOptions:
    """Sampling for every case: greedy, so results repeat, and at most `max_tokens` per turn
    (calls take far fewer; a long free-text answer is judged on its start)."""

    temperature: float | None = 0.0
    seed: int | None = 0
    max_tokens: int | None = DEFAULT_MAX_TOKENS
    jit: bool = False

    def settings(self, case: EvalCase) -> GenerationSettings:
        return GenerationSettings(
            temperature=self.temperature,
            seed=self.seed,
            max_tokens=self.max_tokens,
            tool_choice=case.tool_choice,
        )


async def run_suite(
    provider: Provider,
    suite: Suite,
    options: RunOptions = RunOptions(),
    *,
    on_item: Progress | None = None,
) -> list[ItemResult]:
    results: list[ItemResult] = []
    for case in suite.cases:
        output = await (
            run_jit(provider, case, options)
            if options.jit
            else run_turn(provider, case.messages, case.tools, options.settings(case))
        )
        result = score(case, output)
        results.append(result)
        if on_item is not None:
            on_item(result)
    return results


async def run_turn(
    provider: Provider,
    messages: Sequence[Message],
    tools: Sequence[ToolDefinition],
    settings: GenerationSettings,
) -> TurnOutput:
    """One model turn; a provider error becomes the output's `error`, never an exception."""
    text: list[str] = []
    calls: list[ToolCall] = []
    usage = Usage()
    started = time.perf_counter()
    try:
        async with aclosing(provider.stream(messages, tools, settings)) as events:
            async for event in events:
                if isinstance(event, TextDelta):
                    text.append(event.text)
                elif isinstance(event, ToolCallEvent):
                    calls.append(event.call)
                elif isinstance(event, Finish):
                    usage = event.usage
    except FarmhandError as exc:
        return TurnOutput("".join(text), tuple(calls), usage, _since(started), str(exc))
    return TurnOutput("".join(text), tuple(calls), usage, _since(started))


async def run_jit(provider: Provider, case: EvalCase, options: RunOptions) -> TurnOutput:
    """The case with JIT discovery over its tools (see the module doc)."""
    history = list(case.messages)
    spent = TurnOutput()
    async with DiscoveryToolset([_source(case.tools)], max_tools=5) as discovery:
        discovery.note_conversation(history)
        for _ in range(MAX_DISCOVERY_TURNS + 1):
            tools = await discovery.list_tools()
            output = await run_turn(provider, history, tools, options.settings(case))
            spent = _added(spent, output)
            discovering = [c for c in output.calls if c.name == DISCOVER]
            if output.error or not discovering or len(discovering) < len(output.calls):
                break
            history.append(Message.assistant(output.text, output.calls))
            for call in discovering:
                found = await discovery.call_tool(call.name, call.arguments)
                history.append(Message.tool(ToolResult(call.id, call.name, found.text)))
    prefix = JIT_SERVER + SEPARATOR  # discovered tools are offered as `suite:name`
    calls = tuple(
        replace(c, name=c.name.removeprefix(prefix)) for c in output.calls if c.name != DISCOVER
    )
    return replace(spent, text=output.text, calls=calls, error=output.error)


def _added(total: TurnOutput, turn: TurnOutput) -> TurnOutput:
    return replace(total, usage=total.usage + turn.usage, seconds=total.seconds + turn.seconds)


def _source(tools: Sequence[ToolDefinition]) -> ServerSource:
    @asynccontextmanager
    async def opened() -> AsyncIterator[Toolset]:
        yield _CaseTools(tools)

    return ServerSource(JIT_SERVER, "the tools of this case", opened)


class _CaseTools:
    """A case's tools as a toolset; calls are judged, never run."""

    def __init__(self, tools: Sequence[ToolDefinition]) -> None:
        self._tools = list(tools)

    async def list_tools(self) -> list[ToolDefinition]:
        return self._tools

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> ToolOutput:
        return ToolOutput(f"{name} is not run during an eval", is_error=True)


def _since(started: float) -> float:
    return time.perf_counter() - started
