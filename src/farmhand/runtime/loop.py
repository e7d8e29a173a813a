"""The tool loop: model turn -> tool calls -> results -> next turn, until an answer."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncGenerator, Sequence
from contextlib import aclosing
from dataclasses import dataclass, field

import anyio

from farmhand.messages import (
    Finish,
    Message,
    ReasoningDelta,
    TextDelta,
    ToolCall,
    ToolCallDelta,
    ToolCallEvent,
    ToolResult,
    Usage,
)
from farmhand.observability import NO_CHAT, ChatWatch
from farmhand.prompting.guidance import answer_turn
from farmhand.providers.base import GenerationSettings, Provider
from farmhand.runtime.events import (
    LoopEvent,
    LoopFinished,
    ReasoningChunk,
    StopReason,
    TextChunk,
    ToolCallFinished,
    ToolCallRecord,
    ToolCallStarted,
    ToolCallWriting,
    TurnStarted,
)
from farmhand.runtime.executor import Outcome, ToolRouter
from farmhand.runtime.history import repair_history
from farmhand.tools.choice import AUTO, NONE, REQUIRED

DEFAULT_MAX_TOOL_ROUNDS = 10
DEFAULT_SETTINGS = GenerationSettings()


@dataclass
class _Turn:
    """What one model turn produced."""

    text: list[str] = field(default_factory=list)
    calls: list[ToolCall] = field(default_factory=list)
    finish_reason: str = "stop"
    stop_sequence: str | None = None

    @property
    def answer(self) -> str:
        return "".join(self.text)


@dataclass
class _State:
    history: list[Message]
    usage: Usage = field(default_factory=Usage)
    records: list[ToolCallRecord] = field(default_factory=list)
    done: set[str] = field(default_factory=set)  # ToolCall.key() of every call run
    rounds: int = 0
    # Every call of the last round only made tools available (JIT discovery).
    offered_tools: bool = False

    def finished(
        self,
        answer: str,
        reason: StopReason,
        pending: Sequence[ToolCall] = (),
        stop_sequence: str | None = None,
        held: Sequence[ToolCall] = (),
    ) -> LoopFinished:
        return LoopFinished(
            answer=answer,
            stop_reason=reason,
            stop_sequence=stop_sequence,
            rounds=self.rounds,
            usage=self.usage,
            messages=tuple(self.history),
            tool_calls=tuple(self.records),
            pending_calls=tuple(pending),
            held_calls=tuple(held),
        )


async def run_loop(
    provider: Provider,
    messages: Sequence[Message],
    router: ToolRouter,
    settings: GenerationSettings = DEFAULT_SETTINGS,
    *,
    max_tool_rounds: int = DEFAULT_MAX_TOOL_ROUNDS,
    answer_when_spent: bool = False,
    watch: ChatWatch = NO_CHAT,
) -> AsyncGenerator[LoopEvent, None]:
    """Run the conversation until the model answers without calling tools.

    A round is one model turn whose tool calls were run. After `max_tool_rounds` rounds a
    turn that still calls tools is replaced by one answer turn without tools, and the loop
    ends with stop_reason "round_limit". With `answer_when_spent` the turn after the last
    round is offered no tools at all (tool_choice none) and the loop ends "round_limit"
    whatever it says (the Responses API's `mcp` tools: the model answers from what its
    calls returned).

    A call an approval gate holds for the caller (`toolsets.mcp.approval.ApprovalRequired`)
    does not run (it has its ToolCallStarted, and no ToolCallFinished): the loop ends after
    its round, stop_reason "client_tool_calls", with it in `LoopFinished.held_calls`.

    Every call of a turn runs; see `_execute_all` for which run concurrently. The history
    the model sees carries results cut to the toolsets' size budget, while
    `LoopFinished.tool_calls` carries every executed call with its complete, full-length
    result: that is what `include_tool_results` returns to API callers.

    A call identical to one already run (same tool, same arguments) is not run again: its
    result is in the history already. A turn made only of such repeats means the model is
    stuck (small models often are), so it gets one turn without tools to answer from the
    results it has.
    """
    state = _State(list(messages))
    answer_only = False
    limit_hit = False
    turn_number = 0
    while True:
        turn_number += 1
        yield TurnStarted(turn_number)
        turn = _Turn()
        prompt, turn_settings = repair_history(state.history), settings
        # Listed again from the second turn on: JIT discovery adds tools between turns (the
        # first turn's list is the one the conversation was opened with).
        router.note_conversation(state.history)
        tools = await router.list_tools(refresh=turn_number > 1)
        if state.rounds and settings.tool_choice.mode not in ("auto", "none"):
            # A forced call is for the first turn; after its results the model may answer.
            turn_settings = dataclasses.replace(settings, tool_choice=AUTO)
        if state.offered_tools and settings.tool_choice.mode == "auto":
            # A discovery's result is a menu, not an answer: models asked to answer from it
            # make up what the tools would have said.
            turn_settings = dataclasses.replace(settings, tool_choice=REQUIRED)
        if answer_only:
            # Small models shown their own calls write them again instead of answering.
            prompt = answer_turn(state.history)
            turn_settings = dataclasses.replace(settings, tool_choice=NONE)
        spent = answer_when_spent and state.rounds >= max_tool_rounds
        if spent:
            tools, limit_hit = [], True
            turn_settings = dataclasses.replace(settings, tool_choice=NONE)
        no_calls = answer_only or spent
        writing: dict[int, ToolCallWriting] = {}  # the calls being written, by index
        # Closed here if our reader stops early: the embedded model is held until it ends.
        with watch.turn() as watched:
            async with aclosing(provider.stream(prompt, tools, turn_settings)) as events:
                async for event in events:
                    if isinstance(event, TextDelta):
                        turn.text.append(event.text)
                        yield TextChunk(event.text)
                    elif isinstance(event, ReasoningDelta):
                        yield ReasoningChunk(event.text)
                    elif isinstance(event, ToolCallDelta) and not no_calls:
                        if settings.parallel_tool_calls or event.index == 0:
                            piece = _writing(event, writing, router)
                            if piece is not None:
                                yield piece
                    elif isinstance(event, ToolCallEvent) and not no_calls:
                        turn.calls.append(router.check(event.call))
                    elif isinstance(event, Finish):
                        state.usage += event.usage
                        turn.finish_reason = event.reason
                        turn.stop_sequence = event.stop_sequence
                        usage = event.usage
                        watched.finished(usage.prompt_tokens, usage.completion_tokens, event.reason)
        if not settings.parallel_tool_calls:
            turn.calls = turn.calls[:1]

        stuck = bool(turn.calls) and all(c.key() in state.done for c in turn.calls)
        if turn.calls and (stuck or state.rounds >= max_tool_rounds):
            # Repeating itself, or out of rounds: drop this turn and ask for an answer from
            # the results so far, without tools.
            limit_hit = limit_hit or not stuck
            answer_only = True
            continue
        state.history.append(Message.assistant(turn.answer, tuple(turn.calls)))
        if not turn.calls:
            reason: StopReason = "length" if turn.finish_reason == "length" else "stop"
            if limit_hit:
                yield state.finished(turn.answer, "round_limit")
            else:
                yield state.finished(turn.answer, reason, stop_sequence=turn.stop_sequence)
            return

        state.rounds += 1
        # A client tool called with bad arguments goes back to the model, not to the client.
        client_calls = [c for c in turn.calls if _for_client(c, router)]
        server_calls = [c for c in turn.calls if not _for_client(c, router)]
        fresh: list[ToolCall] = []  # first of each distinct call not run before
        for call in server_calls:
            if call.key() not in state.done:
                state.done.add(call.key())
                fresh.append(call)
        for call in fresh:
            yield ToolCallStarted(call)
        ran = await _execute_all(router, fresh, watch)
        outcomes = dict(zip(map(id, fresh), ran, strict=True))
        state.offered_tools = bool(fresh) and all(o.offers_tools for o in outcomes.values())
        held: list[ToolCall] = []
        for call in server_calls:
            outcome = outcomes.get(id(call))
            if outcome is None:
                result = _repeat_result(call)
            elif outcome.held:
                held.append(call)
                continue
            else:
                result = outcome.result
                state.records.append(ToolCallRecord(call, outcome.full))
                yield ToolCallFinished(call, result, outcome.full)
            state.history.append(Message.tool(result))
        if client_calls or held:
            yield state.finished(turn.answer, "client_tool_calls", client_calls, held=held)
            return


def _writing(
    delta: ToolCallDelta, writing: dict[int, ToolCallWriting], router: ToolRouter
) -> ToolCallWriting | None:
    """The loop's event for a parser's delta: the first names the call, as the router
    resolves the name; later ones carry argument pieces of a call already named."""
    if delta.name:
        name = router.resolve(delta.name) or delta.name
        opened = ToolCallWriting(delta.index, delta.id, name, "", router.is_client_tool(name))
        writing[delta.index] = opened
        return dataclasses.replace(opened, arguments=delta.arguments)
    known = writing.get(delta.index)
    if known is None or not delta.arguments:
        return None
    return dataclasses.replace(known, arguments=delta.arguments)


def _for_client(call: ToolCall, router: ToolRouter) -> bool:
    return router.is_client_tool(call.name) and not call.parse_error


def _outcome_label(call: ToolCall, outcome: Outcome, offered: bool) -> str:
    if not offered:
        return "invalid"
    if outcome.held:
        return "held"
    return "error" if outcome.result.is_error else "ok"


def _repeat_result(call: ToolCall) -> ToolResult:
    return ToolResult(
        call.id,
        call.name,
        "This exact call was already made; its result is above. Use it, or call something else.",
        is_error=True,
    )


async def _execute_all(
    router: ToolRouter, calls: Sequence[ToolCall], watch: ChatWatch = NO_CHAT
) -> list[Outcome]:
    """Run the calls of a turn; results keep the calls' order.

    Calls that may run side by side (see `ToolRouter.serial_lane`) each get a task; the
    others queue in one task per server and run there in the order the model wrote them.
    """
    results: list[Outcome | None] = [None] * len(calls)
    lanes: dict[str, list[int]] = {}
    alone: list[int] = []
    for index, call in enumerate(calls):
        lane = router.serial_lane(call)
        if lane is None:
            alone.append(index)
        else:
            lanes.setdefault(lane, []).append(index)

    async def run(indexes: list[int]) -> None:
        for index in indexes:
            call = calls[index]
            offered = not call.parse_error and router.runs(call.name)
            with watch.tool_call(call.name, call.id, offered=offered) as watched:
                results[index] = outcome = await router.execute_full(call)
                watched.done(_outcome_label(call, outcome, offered))

    async with anyio.create_task_group() as group:
        for index in alone:
            group.start_soon(run, [index])
        for indexes in lanes.values():
            group.start_soon(run, indexes)
    return [r for r in results if r is not None]


async def run_to_completion(
    provider: Provider,
    messages: Sequence[Message],
    router: ToolRouter,
    settings: GenerationSettings = DEFAULT_SETTINGS,
    *,
    max_tool_rounds: int = DEFAULT_MAX_TOOL_ROUNDS,
) -> LoopFinished:
    """`run_loop` without the progress events."""
    finished: LoopFinished | None = None
    async for event in run_loop(
        provider, messages, router, settings, max_tool_rounds=max_tool_rounds
    ):
        if isinstance(event, LoopFinished):
            finished = event  # the last event: reading on lets the loop end by itself
    if finished is None:
        raise AssertionError("run_loop ended without LoopFinished")
    return finished
