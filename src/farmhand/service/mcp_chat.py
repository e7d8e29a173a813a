"""A chat with MCP tools the request named one by one (`service.mcp_tools`): the loop runs
until the model calls one of them, the service runs the call (or holds it for the client's
approval) and starts the loop again with the result, until the model answers, calls a tool
of the client's, or waits for an approval.

Events are the loop's (`runtime.events`, LoopFinished last, with the whole run's rounds,
usage and history) plus what happens to these tools: `McpToolsListed` when a server's
tools are known, `McpCallDone` for a call that ran, `McpApprovalNeeded` for one held. A
request without such tools is `chat.run_chat` unchanged.

Approvals come back in the next request as `Approval`s: an approved call runs before the
model's next turn, a denied one is answered with the denial, so the model knows.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncGenerator, Collection, Sequence
from contextlib import aclosing
from dataclasses import dataclass

from farmhand.errors import LoopError
from farmhand.messages import Message, ToolCall, ToolResult, Usage
from farmhand.runtime.events import LoopEvent, LoopFinished, StopReason, ToolCallRecord
from farmhand.service.chat import ChatRequest, run_chat
from farmhand.service.mcp_tools import McpTool, OpenMcpTools, open_mcp_tools, split_name
from farmhand.service.state import ServiceState
from farmhand.tools.choice import AUTO, NONE
from farmhand.tools.definition import ToolDefinition

DENIED = "The user denied this call{reason}; do not call it again unless the user asks."


@dataclass(frozen=True)
class McpToolsListed:
    label: str
    tools: tuple[ToolDefinition, ...]


@dataclass(frozen=True)
class McpCallDone:
    """A call that ran: `result` as the model saw it, `full` as the tool returned it.
    `approval_id` is set when it ran because the client approved it."""

    call: ToolCall
    result: ToolResult
    full: ToolResult
    approval_id: str | None = None

    @property
    def label(self) -> str:
        return split_name(self.call.name)[0]


@dataclass(frozen=True)
class McpApprovalNeeded:
    """A call held until the client approves it (the run ends after these)."""

    call: ToolCall


@dataclass(frozen=True)
class Approval:
    """The client's answer to a held call (`call.id` is the id it was held under)."""

    call: ToolCall
    approve: bool
    reason: str = ""


McpChatEvent = LoopEvent | McpToolsListed | McpCallDone | McpApprovalNeeded


def may_ask(state: ServiceState, request: ChatRequest, tools: Sequence[McpTool] = ()) -> bool:
    """Whether the chat could pause on a question: only MCP servers ask (elicitation, or
    a call that needs approval), so a chat with none can run without a runner to park it."""
    if tools or request.mcp_servers or request.tools_path is not None:
        return True
    return bool(state.config.servers_for(state.model_config(request.model)))


def run_mcp_chat(
    state: ServiceState,
    request: ChatRequest,
    tools: Sequence[McpTool] = (),
    approvals: Sequence[Approval] = (),
    listed: Collection[str] = (),
) -> AsyncGenerator[McpChatEvent, None]:
    """The chat's events; `listed`: labels whose tools the client was told already.
    Without MCP tools, `run_chat`'s own generator: a layer passing on every event would
    cost each of them a resumption."""
    if not tools:
        return run_chat(state, request)
    return _mcp_chat(state, request, tools, approvals, listed)


async def _mcp_chat(
    state: ServiceState,
    request: ChatRequest,
    tools: Sequence[McpTool],
    approvals: Sequence[Approval],
    listed: Collection[str],
) -> AsyncGenerator[McpChatEvent, None]:
    model = state.model_config(request.model)
    servers = [s.name for s in state.config.servers_for(model)]
    async with open_mcp_tools(state, servers, tools, request.asker) as opened:
        for server in opened.servers:
            if server.label not in listed:
                yield McpToolsListed(server.label, server.tools)
        run = _Run(list(request.messages))
        for approval in approvals:
            done = await _answer(opened, approval)
            if done is not None:
                yield done
                run.records.append(ToolCallRecord(done.call, done.full))
                result = done.result
            else:
                reason = f" ({approval.reason})" if approval.reason else ""
                call = approval.call
                result = ToolResult(call.id, call.name, DENIED.format(reason=reason), True)
            run.messages = with_result(run.messages, result)
        async with aclosing(_rounds(state, request, opened, run)) as steps:
            async for step in steps:
                yield step


@dataclass
class _Run:
    messages: list[Message]
    records: list[ToolCallRecord] = dataclasses.field(default_factory=list)
    rounds: int = 0
    usage: Usage = dataclasses.field(default_factory=Usage)

    def finished(
        self, last: LoopFinished, reason: StopReason, pending: Sequence[ToolCall]
    ) -> LoopFinished:
        return LoopFinished(
            answer=last.answer,
            stop_reason=reason,
            rounds=self.rounds,
            usage=self.usage,
            messages=tuple(self.messages),
            tool_calls=tuple(self.records),
            pending_calls=tuple(pending),
        )


async def _rounds(
    state: ServiceState, request: ChatRequest, opened: OpenMcpTools, run: _Run
) -> AsyncGenerator[McpChatEvent, None]:
    limit = request.max_tool_rounds or state.config.runtime.max_tool_rounds
    settings = request.settings
    offered = [*request.client_tools, *opened.definitions]
    while True:
        last_round = run.rounds >= limit
        if last_round:  # out of rounds: one answer without these tools
            settings = dataclasses.replace(settings, tool_choice=NONE)
            offered = list(request.client_tools)
        step = dataclasses.replace(
            request,
            messages=run.messages,
            settings=settings,
            client_tools=offered,
            max_tool_rounds=max(1, limit - run.rounds),
        )
        finished: LoopFinished | None = None
        async with aclosing(run_chat(state, step)) as events:
            async for event in events:
                if isinstance(event, LoopFinished):
                    finished = event
                else:
                    yield event
        if finished is None:
            raise LoopError("the tool loop ended without an answer")
        run.rounds += finished.rounds
        run.usage += finished.usage
        run.records += finished.tool_calls
        run.messages = list(finished.messages)
        ours = [c for c in finished.pending_calls if opened.owns(c.name)]
        theirs = [c for c in finished.pending_calls if not opened.owns(c.name)]
        held = [c for c in ours if opened.needs_approval(c)]
        for call in ours:
            if call in held:
                continue
            outcome = await opened.call(call)
            done = McpCallDone(call, outcome.result, outcome.full)
            yield done
            run.records.append(ToolCallRecord(call, outcome.full))
            run.messages = with_result(run.messages, outcome.result)
        if not ours or held or theirs:
            for call in held:
                yield McpApprovalNeeded(call)
            reason = "round_limit" if last_round else finished.stop_reason
            yield run.finished(finished, reason, theirs)
            return
        # A forced tool_choice is for the first turn; after its results the model may answer.
        settings = dataclasses.replace(settings, tool_choice=AUTO)


async def _answer(opened: OpenMcpTools, approval: Approval) -> McpCallDone | None:
    """Run an approved call; None for a denied one."""
    if not approval.approve:
        return None
    outcome = await opened.call(approval.call)
    return McpCallDone(approval.call, outcome.result, outcome.full, approval.call.id)


def with_result(messages: Sequence[Message], result: ToolResult) -> list[Message]:
    """`messages` with the result placed after its call's turn and the results already
    there (at the end when the call is not found)."""
    history = list(messages)
    turn = next(
        (
            i
            for i in range(len(history) - 1, -1, -1)
            if any(c.id == result.call_id for c in history[i].tool_calls)
        ),
        None,
    )
    if turn is None:
        return [*history, Message.tool(result)]
    end = turn + 1
    while end < len(history) and history[end].role == "tool":
        end += 1
    history.insert(end, Message.tool(result))
    return history
