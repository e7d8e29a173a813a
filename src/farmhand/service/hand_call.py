"""Calling one tool of an operator's MCP server by hand (the playground's tool form):
the same pooled session, wrappers and request policy as a chat's call, without a model.

A server whose `require_approval` asks before a call runs is answered by the request
itself: `approved` true is the person's yes (the page asks them first), false a no.

A question the server asks during the call (elicitation) goes back to the client, as a
chat's does over the Responses API: the call runs in the service's `ChatRunner` (it cannot
stop while the server waits), the request answers with the question, and a later request
answers it and reads on to the call's result (or to the next question):

    outcome = await read_hand_call(state, start_hand_call(state, "ask", "order_pizza", {}, False))
    if isinstance(outcome, InputRequested):
        outcome = await read_hand_call(state, answer_hand_call(state, outcome.id, "accept", {...}))
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import aclosing
from dataclasses import dataclass
from typing import Any

from farmhand.errors import AnswerError, RequestError, ToolError
from farmhand.messages import ToolCall, ToolResult
from farmhand.runtime.events import InputRequested, ToolCallFinished
from farmhand.runtime.session import ToolSettings
from farmhand.service.chat import admit_servers, server_toolsets
from farmhand.service.parked import HandCall
from farmhand.service.state import ServiceState
from farmhand.tools.definition import SEPARATOR
from farmhand.toolsets.base import Toolset
from farmhand.toolsets.mcp.elicitation import Answer, Asker, Question
from farmhand.toolsets.mcp.policy import ChatServers

__all__ = [
    "HandCall",
    "HandCallAsker",
    "HandOutcome",
    "admitted_server",
    "answer_hand_call",
    "read_hand_call",
    "start_hand_call",
]


@dataclass(frozen=True)
class HandCallAsker:
    """Answers the approval the server's policy asks for with the request's own choice, and
    passes the server's own questions on to `ask` (the client, through the runner)."""

    approved: bool
    ask: Asker

    async def __call__(self, question: Question) -> Answer:
        if question.kind != "approval":
            return await self.ask(question)
        if self.approved:
            return Answer.accept()
        return Answer(
            "decline",
            reason="the call was sent without approved: true (the person's confirmation)",
            refused=True,
        )


HandOutcome = ToolResult | InputRequested
"""What reading a hand call gives: the tool's result, or a question it waits on."""


def admitted_server(state: ServiceState, server_name: str) -> ChatServers:
    """The configured server `server_name`, admitted by the request policy; RequestError
    (404) for a server the config does not have, PolicyError for one the policy refuses."""
    server = next((s for s in state.config.mcp.servers if s.name == server_name), None)
    if server is None:
        names = ", ".join(s.name for s in state.config.mcp.servers) or "none"
        raise RequestError(
            f"no configured MCP server is named {server_name!r} (configured: {names});"
            " GET /api/mcp/servers lists them",
            param="server",
            status=404,
        )
    return admit_servers(state, [server])


def start_hand_call(
    state: ServiceState, server_name: str, tool: str, arguments: dict[str, Any], approved: bool
) -> HandCall:
    """Starts `tool` of the configured server `server_name` in the service's runner (the
    server is checked first, so a refusal is the request's error); read it with
    `read_hand_call`."""
    servers = admitted_server(state, server_name)
    settings = ToolSettings(
        tool_timeout=state.config.runtime.tool_timeout,
        max_tool_result_chars=state.config.runtime.max_tool_result_chars,
    )
    call = ToolCall(f"{server_name}{SEPARATOR}{tool}", arguments)

    async def run(ask: Asker) -> AsyncIterator[ToolCallFinished]:
        opener = server_toolsets(state, servers, settings, asker=HandCallAsker(approved, ask))
        async with opener.open(servers.all[0]) as toolset:
            # Counted like the model's calls; a tool the server lacks is no label of its own.
            offered = state.observer.active and await _offers(toolset, tool)
            with state.observer.hand_call(call.name, call.id, offered=offered) as watch:
                try:
                    output = await toolset.call_tool(tool, arguments)
                except ToolError:
                    watch.done("error")
                    raise
                watch.done("error" if output.is_error else "ok")
        result = ToolResult(call.id, call.name, output.text, is_error=output.is_error)
        yield ToolCallFinished(call, result)

    return HandCall(state.chat_runner().start(run), server_name, tool)


async def read_hand_call(state: ServiceState, call: HandCall) -> HandOutcome:
    """The call's result, or the question it now waits on (remembered as a hand call's, so
    only `answer_hand_call` takes it). Raises what the call raised."""
    outcome: HandOutcome | None = None
    async with aclosing(state.chat_runner().read(call.running)) as events:
        async for event in events:
            if isinstance(event, InputRequested):
                _forget_closed(state)
                state.hand_questions[event.id] = call
                return event
            if isinstance(event, ToolCallFinished):
                outcome = event.result
    if outcome is None:
        raise RuntimeError("a call by hand ended without a result")
    return outcome


def answer_hand_call(
    state: ServiceState, question_id: str, action: str, content: dict[str, Any] | None
) -> HandCall:
    """Answers the question a call by hand waits on, and gives the call to read on.
    AnswerError (`unknown`, a 404) when no call by hand waits on that id; AnswerError when
    the content does not fit the question's form (the question stays open)."""
    call = state.hand_questions.get(question_id)
    if call is None:
        raise AnswerError(
            f"no call by hand waits on question {question_id!r}: it was answered already,"
            " timed out, or belongs to a chat (answer those through /v1/responses)",
            unknown=True,
        )
    try:
        state.chat_runner().answer(question_id, action, content)
    except AnswerError as exc:
        if exc.unknown:  # timed out: declined, and the call went on without its reader
            del state.hand_questions[question_id]
        raise
    del state.hand_questions[question_id]
    return call


async def _offers(toolset: Toolset, tool: str) -> bool:
    """Whether the server lists `tool` (its list is cached by the pool)."""
    try:
        return tool in {definition.name for definition in await toolset.list_tools()}
    except ToolError:  # the call that follows says what is wrong
        return False


def _forget_closed(state: ServiceState) -> None:
    """Drop the questions that timed out unanswered (their calls are gone)."""
    parked = set(state.chat_runner().parked)
    for question_id in [q for q in state.hand_questions if q not in parked]:
        del state.hand_questions[question_id]
