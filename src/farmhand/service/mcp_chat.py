"""A chat with MCP tools the request named one by one (`service.mcp_tools`): their servers
are opened under the request's labels and offered to the tool loop beside the chat's own
tools; the loop runs their calls, and holds those the request's `require_approval` covers
(each label's approval gate has no approver: the client decides, in a later request).

Events are the loop's (`runtime.events`, LoopFinished last), with these tools' calls told
as the client sees them (`service.mcp_events`): `McpToolsListed` when a server's tools are
known, `McpCallDone` for a call that ran (the loop's own events for it are not passed on:
the call reaches the client whole), `McpApprovalNeeded` for each call held. A request
without such tools is `chat.run_chat` unchanged.

Approvals come back in the next request as `Approval`s: an approved call runs before the
model's next turn, a denied one is answered with the denial, so the model knows.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncGenerator, Collection, Sequence
from contextlib import aclosing
from dataclasses import dataclass

from farmhand.messages import Message, ToolCall, ToolResult
from farmhand.runtime.events import (
    LoopFinished,
    ToolCallFinished,
    ToolCallRecord,
    ToolCallStarted,
    ToolCallWriting,
)
from farmhand.service.chat import ChatRequest, run_chat
from farmhand.service.mcp_events import (
    ChatEvent,
    McpApprovalNeeded,
    McpCallDone,
    McpChatEvent,
    McpToolsListed,
)
from farmhand.service.mcp_tools import McpTool, OpenMcpTools, open_mcp_tools
from farmhand.service.state import ServiceState

__all__ = [
    "DENIED",
    "Approval",
    "ChatEvent",
    "McpApprovalNeeded",
    "McpCallDone",
    "McpChatEvent",
    "McpToolsListed",
    "may_ask",
    "run_mcp_chat",
    "with_result",
]

DENIED = "The user denied this call{reason}; do not call it again unless the user asks."


@dataclass(frozen=True)
class Approval:
    """The client's answer to a held call (`call.id` is the id it was held under)."""

    call: ToolCall
    approve: bool
    reason: str = ""


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
        messages = list(request.messages)
        answered: list[ToolCallRecord] = []
        for approval in approvals:
            done = await _answer(opened, approval)
            if done is not None:
                yield done
                answered.append(ToolCallRecord(done.call, done.full))
                result = done.result
            else:
                reason = f" ({approval.reason})" if approval.reason else ""
                call = approval.call
                result = ToolResult(call.id, call.name, DENIED.format(reason=reason), True)
            messages = with_result(messages, result)
        chat = dataclasses.replace(
            request,
            messages=messages,
            toolsets=[*request.toolsets, *opened.toolsets],
            answer_when_spent=bool(opened.toolsets),  # the model answers from their results
        )
        async with aclosing(run_chat(state, chat)) as events:
            async for event in events:
                if isinstance(event, RETOLD):
                    for told in _as_told(event, opened, answered):
                        yield told
                else:  # text, reasoning, turns: as they are
                    yield event


RETOLD = (ToolCallWriting, ToolCallStarted, ToolCallFinished, LoopFinished)


def _as_told(
    event: McpChatEvent, opened: OpenMcpTools, answered: Sequence[ToolCallRecord]
) -> list[McpChatEvent]:
    """A loop event as the client is told it: a call of these tools only once it ran, the
    calls held before the end, and the approved calls among the run's records."""
    if isinstance(event, ToolCallWriting):
        return [] if opened.owns(event.name) else [event]
    if isinstance(event, ToolCallStarted):
        return [] if opened.owns(event.call.name) else [event]
    if isinstance(event, ToolCallFinished) and opened.owns(event.call.name):
        return [McpCallDone(event.call, event.result, event.full or event.result)]
    if isinstance(event, LoopFinished):
        held: list[McpChatEvent] = [McpApprovalNeeded(call) for call in event.held_calls]
        if answered:
            event = dataclasses.replace(event, tool_calls=(*answered, *event.tool_calls))
        return [*held, event]
    return [event]


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
