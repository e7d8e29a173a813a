"""Chats that outlive their request: the Responses API's pause for a question.

When an MCP server asks something mid-call (or a call needs the approval its server's
`require_approval` asks for), the Responses API returns the question to its client and the
response ends; the answer comes in a later request. The chat's tool loop cannot stop and
start again (the call is in flight on the server), so it keeps running, waiting on the
answer, in a task of the service's own (`ChatRunner`, opened for the app's lifespan) rather
than the request's. Its events go into a buffer; the request that answers the question takes
the chat and reads on from there.

    running = runner.start(lambda asker: run_mcp_chat(state, replace(request, asker=asker)))
    async for event in runner.read(running):   # ends at LoopFinished, or at a question:
        ...                                    # then the chat is parked on its id
    running = runner.answer(question_id, "accept", content)   # a later request

A chat whose question nobody answers gets a decline when the question times out
(`server.question_timeout`); it then finishes on its own and what it says after that is
dropped (no one asked for it). A reader that stops early (its client went away) cancels its
chat; so does the service's shutdown.
"""

from __future__ import annotations

import math
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any, TypeAlias, cast

import anyio
from anyio.abc import TaskGroup
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from farmhand.errors import AnswerError
from farmhand.runtime.events import InputRequested, LoopEvent
from farmhand.runtime.questions import PendingAnswers, QuestionRelay
from farmhand.service.mcp_events import ChatEvent, McpChatEvent
from farmhand.service.question_holders import QuestionHolders
from farmhand.toolsets.mcp.elicitation import Action, Answer, Asker

__all__ = ["ANSWERS", "ChatEvent", "ChatFactory", "ChatRunner", "HandCall", "RunningChat"]

ANSWERS: dict[str, Action] = {"accept": "accept", "decline": "decline", "cancel": "cancel"}

ChatFactory: TypeAlias = Callable[[Asker], AsyncIterator[McpChatEvent]]
"""Makes a chat's events given the asker its servers' questions go to."""


@dataclass(frozen=True)
class _Failed:
    error: Exception


@dataclass(eq=False)
class RunningChat:
    """A chat running in the service's task group; `events` buffers what it says."""

    events: MemoryObjectReceiveStream[ChatEvent | _Failed]
    scope: anyio.CancelScope = field(default_factory=anyio.CancelScope)
    parked_on: str | None = None
    """The question it waits on while no request reads it."""
    finished: bool = False


@dataclass(frozen=True)
class HandCall:
    """A tool called by hand (the playground's tool form, `service.hand_call`) running in
    the service's runner, and what it calls."""

    running: RunningChat
    server: str
    tool: str


class ChatRunner:
    """The service's running chats, and the questions they are parked on. `async with`
    for the app's lifespan: chats still running when it ends are cancelled."""

    def __init__(self, answers: PendingAnswers, holders: QuestionHolders | None = None) -> None:
        self.answers = answers
        self.holders = holders
        """Where replicas sharing a store record the questions they hold (None: no others)."""
        self._group: TaskGroup | None = None
        self._parked: dict[str, RunningChat] = {}
        self._running: set[RunningChat] = set()

    async def __aenter__(self) -> ChatRunner:
        self._group = anyio.create_task_group()
        await self._group.__aenter__()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        group, self._group = self._group, None
        if group is not None:
            group.cancel_scope.cancel()
            await group.__aexit__(None, None, None)

    @property
    def running(self) -> int:
        """How many chats run (parked ones included)."""
        return len(self._running)

    @property
    def parked(self) -> list[str]:
        """The ids of the questions chats are parked on."""
        return list(self._parked)

    def start(self, chat: ChatFactory) -> RunningChat:
        """Start a chat in the service's task group; read it with `read`."""
        if self._group is None:
            raise RuntimeError("the service's chat runner is not open (the app's lifespan)")
        send: MemoryObjectSendStream[ChatEvent | _Failed]
        receive: MemoryObjectReceiveStream[ChatEvent | _Failed]
        send, receive = anyio.create_memory_object_stream(math.inf)
        running = RunningChat(receive)
        self._running.add(running)
        self._group.start_soon(self._run, running, send, chat)
        return running

    async def _run(
        self,
        running: RunningChat,
        send: MemoryObjectSendStream[ChatEvent | _Failed],
        chat: ChatFactory,
    ) -> None:
        try:
            with running.scope, send:
                try:
                    async with QuestionRelay(self.answers) as relay:
                        # The relay passes events on untouched; its type names the loop's.
                        events = cast("AsyncIterator[LoopEvent]", chat(relay))
                        async for event in relay.run(events):
                            await send.send(cast("ChatEvent", event))
                except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                    pass  # its reader is gone and no one parked it: nothing to say it to
                except Exception as exc:  # the reader raises it, in its request
                    send.send_nowait(_Failed(exc))
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            pass
        finally:
            running.finished = True
            self._running.discard(running)
            if running.parked_on is not None:  # timed out, nobody reads: drop the rest
                self._unpark(running.parked_on)
                running.events.close()

    async def read(self, running: RunningChat) -> AsyncGenerator[ChatEvent, None]:
        """The chat's events up to its LoopFinished, or up to a question (the last event
        then): the chat is parked on its id until `answer`. Raises what the chat raised.
        A reader that stops before either cancels the chat."""
        parked = False
        try:
            async for item in running.events:
                if isinstance(item, _Failed):
                    raise item.error
                if isinstance(item, InputRequested) and running.finished:
                    continue  # read too late: it timed out already, and its decline follows
                if isinstance(item, InputRequested):
                    running.parked_on = item.id
                    self._parked[item.id] = running
                    if self.holders is not None:
                        self.holders.park(item.id)
                    parked = True
                yield item
                if parked:
                    return
        finally:
            if not parked:
                running.scope.cancel()
                running.events.close()  # read to its end or left: nobody reads it again

    def _unpark(self, question_id: str) -> RunningChat | None:
        running = self._parked.pop(question_id, None)
        if running is not None and self.holders is not None:
            self.holders.release(question_id)
        return running

    def drop(self, question_id: str) -> bool:
        """Cancel the chat parked on `question_id` (its client gave up on it); False when
        none is."""
        running = self._unpark(question_id)
        if running is None:
            return False
        self.answers.discard(question_id)
        running.parked_on = None
        running.scope.cancel()
        running.events.close()
        return True

    def answer(
        self,
        question_id: str,
        action: str,
        content: dict[str, Any] | None = None,
        reason: str = "",
    ) -> RunningChat:
        """Answer the question a chat is parked on, and take the chat to read on.
        AnswerError (`unknown`) when no chat waits on it; AnswerError when the content does
        not fit the question's form (the question stays open)."""
        running = self._parked.get(question_id)
        holder = self.holders.elsewhere(question_id) if running is None and self.holders else None
        if holder is not None:
            raise AnswerError(
                f"question {question_id!r} waits in replica {holder}, not in this one: send"
                " the answer there (a load balancer in front of several replicas must keep a"
                " client's Responses requests on one replica: sticky sessions)",
                elsewhere=True,
            )
        if running is None:
            raise AnswerError(
                f"no open question {question_id!r}: it was answered already, timed out, or"
                " never asked",
                unknown=True,
            )
        if action not in ANSWERS:
            raise AnswerError(f'the action must be "accept", "decline" or "cancel", not {action!r}')
        self.answers.answer(question_id, Answer(ANSWERS[action], content, reason))
        self._unpark(question_id)
        running.parked_on = None
        return running
