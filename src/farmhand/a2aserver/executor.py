"""The agent: an A2A message runs as a chat of the service's (`service.chat.run_chat`,
the tool loop with the model's MCP servers), its events published as the task's.

    chat event                 A2A event
    (start)                    Task (submitted, the message in its history), then working
    TextChunk                  artifact "answer", streamed (a turn's first piece replaces
                               the text of the turn before: the answer is the last turn's)
    ToolCallStarted/Finished   status working, a message naming the call (and a data part)
    InputRequested             status input-required with the question; the chat stays
                               parked in the service's runner (`service.parked`), and the
                               next message of the task answers it
    LoopFinished               the answer artifact whole, then completed (usage in the
                               task's metadata)
    a farmhand error           failed, its message as the status message

A message that continues a context (`contextId` of earlier tasks of the same client)
continues their conversation: each completed task's first message and answer come before
it. A client's mistake found before the chat starts (an unknown model or project, a file
part) is a JSON-RPC error (invalid params), not a task.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import AsyncIterator, Callable
from contextlib import aclosing
from typing import Any

from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.context import ServerCallContext
from a2a.server.events import EventQueue
from a2a.server.tasks import TaskUpdater
from a2a.types.a2a_pb2 import Message as A2AMessage
from a2a.types.a2a_pb2 import Part, Task, TaskState, TaskStatus
from a2a.utils.errors import InvalidParamsError
from google.protobuf import struct_pb2
from google.protobuf.json_format import ParseDict

from farmhand.a2aserver.answer import AnswerStream
from farmhand.a2aserver.parts import (
    GivenAnswer,
    call_note,
    options,
    question_parts,
    read_answer,
    user_text,
)
from farmhand.a2aserver.slots import TaskSlots
from farmhand.a2aserver.task_store import owner_of
from farmhand.a2aserver.transcript import earlier_turns
from farmhand.errors import AnswerError, FarmhandError, RequestError
from farmhand.messages import Message
from farmhand.runtime.events import (
    InputRequested,
    LoopFinished,
    TextChunk,
    ToolCallFinished,
    ToolCallStarted,
    TurnStarted,
)
from farmhand.service.chat import ChatRequest, run_chat
from farmhand.service.mcp_chat import may_ask
from farmhand.service.parked import ChatEvent
from farmhand.service.projects import state_for, store_for
from farmhand.service.state import ServiceState

log = logging.getLogger(__name__)


class FarmhandAgent(AgentExecutor):
    def __init__(
        self, state: ServiceState, owner: Callable[[ServerCallContext], str] = owner_of
    ) -> None:
        self.state = state
        self.owner = owner
        self.slots = TaskSlots(state.answers, state.config.server.limits)
        self._cancelled: set[str] = set()

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        task_id, context_id = str(context.task_id), str(context.context_id)
        message = context.message
        if message is None:
            raise InvalidParamsError(message="a message is required")
        updater = TaskUpdater(event_queue, task_id, context_id)
        current = context.current_task
        if current is not None and current.status.state == TaskState.TASK_STATE_INPUT_REQUIRED:
            events = await self._resume(updater, message)
        else:
            state, request = self._chat(context, message)
            self.slots.take(task_id, self.owner(context.call_context))
            if current is None:
                await event_queue.enqueue_event(
                    _new_task(task_id, context_id, message, state, request)
                )
            events = self._start(state, request)
        if events is None:  # answered without a chat to read on (or asked again)
            self.slots.release(task_id)
            return
        try:
            await updater.start_work()
            await self._relay(updater, events, live=_watched(context))
        except FarmhandError as exc:
            await updater.failed(_said(updater, str(exc)))
        except Exception as exc:  # farmhand's own fault: the log has it, the client a note
            log.exception("A2A task %s failed", task_id)
            await updater.failed(
                _said(updater, f"internal error ({type(exc).__name__}); see the server log")
            )
        finally:
            self._cancelled.discard(task_id)
            self.slots.release(task_id)

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        task_id = str(context.task_id)
        self._cancelled.add(task_id)
        question = self.slots.drop(task_id)
        if question is not None:  # no request runs it: end the parked chat here
            self.state.chat_runner().drop(question.id)
            self._cancelled.discard(task_id)
        await TaskUpdater(event_queue, task_id, str(context.context_id)).cancel()

    def _chat(
        self, context: RequestContext, message: A2AMessage
    ) -> tuple[ServiceState, ChatRequest]:
        """The chat the message asks for; InvalidParamsError for the client's mistakes."""
        try:
            chosen = options(context.metadata, message)
            state = self.state
            if chosen.project is not None:
                state = state_for(state, store_for(state).get(*chosen.project))
            model = state.model_config(chosen.model).name
            history = earlier_turns(
                self.state.agent_task_store(),
                self.owner(context.call_context),
                str(context.context_id),
                str(context.task_id),
            )
            messages = [*history, Message.user(user_text(message))]
        except FarmhandError as exc:
            raise InvalidParamsError(message=str(exc)) from None
        return state, ChatRequest(model=model, messages=messages, settings=chosen.settings)

    def _start(self, state: ServiceState, request: ChatRequest) -> AsyncIterator[ChatEvent]:
        if not may_ask(state, request):  # nothing can ask a question: run in this task
            return run_chat(state, request)
        runner = state.chat_runner()
        running = runner.start(
            lambda asker: run_chat(state, dataclasses.replace(request, asker=asker))
        )
        return runner.read(running)

    async def _resume(
        self, updater: TaskUpdater, message: A2AMessage
    ) -> AsyncIterator[ChatEvent] | None:
        """The parked chat, the message's answer handed to it; None when the task waits
        on (or ended with) something else."""
        question = self.slots.unpark(updater.task_id)
        if question is None:  # timed out, or the server restarted since it was asked
            timeout = self.state.config.server.question_timeout
            await updater.failed(
                _said(
                    updater,
                    "the question this task waited on is gone: nobody answered it within"
                    f" {timeout:g} s (server.question_timeout), or the server restarted."
                    " Send the request again as a new message.",
                )
            )
            return None
        runner = self.state.chat_runner()
        try:
            given: GivenAnswer = read_answer(message, question.question.kind)
            running = runner.answer(question.id, given.action, given.content, given.reason)
        except (RequestError, AnswerError) as exc:
            if isinstance(exc, AnswerError) and exc.unknown:
                await updater.failed(
                    _said(updater, f"{exc}; send the request again as a new message")
                )
                return None
            self.slots.park(updater.task_id, question)  # still open: ask again
            text, data = question_parts(question)
            await updater.requires_input(_said(updater, f"{exc}. {text}", data))
            return None
        return runner.read(running)

    async def _relay(
        self, updater: TaskUpdater, events: AsyncIterator[ChatEvent], *, live: bool
    ) -> None:
        answer = AnswerStream(updater, live=live)
        async with aclosing(events) as stream:  # type: ignore[type-var]
            async for event in stream:
                if updater.task_id in self._cancelled:
                    return
                if isinstance(event, TextChunk):
                    await answer.add(event.text)
                elif isinstance(event, TurnStarted):
                    await answer.new_turn()
                elif isinstance(event, ToolCallStarted | ToolCallFinished):
                    await answer.flush()
                    text, data = call_note(event)
                    await updater.start_work(_said(updater, text, data))
                elif isinstance(event, InputRequested):
                    await answer.flush()
                    self.slots.park(updater.task_id, event)
                    text, data = question_parts(event)
                    await updater.requires_input(_said(updater, text, data))
                    return
                elif isinstance(event, LoopFinished):
                    await self._finish(updater, answer, event)
                    return

    async def _finish(
        self, updater: TaskUpdater, answer: AnswerStream, finished: LoopFinished
    ) -> None:
        parts = [Part(text=finished.answer)]
        if finished.pending_calls:  # the model's inline tools: the client runs them
            calls = [
                {"id": c.id, "name": c.name, "arguments": c.arguments}
                for c in finished.pending_calls
            ]
            parts.append(_data_part({"tool_calls": calls}))
        await answer.finish(parts)
        usage = finished.usage
        await updater.update_status(
            TaskState.TASK_STATE_COMPLETED,
            metadata={
                "stop_reason": finished.stop_reason,
                "rounds": finished.rounds,
                "usage": {
                    "prompt_tokens": usage.prompt_tokens,
                    "completion_tokens": usage.completion_tokens,
                },
            },
        )


def _watched(context: RequestContext) -> bool:
    """Whether someone may read the answer as it grows: a stream, or a client that took
    the task at once to poll it (a plain SendMessage waits for the whole)."""
    if context.call_context.state.get("method") != "SendMessage":
        return True
    return bool(context.configuration and context.configuration.return_immediately)


def _new_task(
    task_id: str, context_id: str, message: A2AMessage, state: ServiceState, request: ChatRequest
) -> Task:
    task = Task(
        id=task_id,
        context_id=context_id,
        status=TaskStatus(state=TaskState.TASK_STATE_SUBMITTED),
        history=[message],
    )
    task.metadata.update({"model": state.model_config(request.model).name})
    return task


def _data_part(data: dict[str, Any]) -> Part:
    return Part(data=ParseDict(data, struct_pb2.Value()))


def _said(updater: TaskUpdater, text: str, data: dict[str, Any] | None = None) -> A2AMessage:
    """A message of the agent's in this task: `text`, and `data` as a data part."""
    parts = [Part(text=text)]
    if data is not None:
        parts.append(_data_part(data))
    return updater.new_agent_message(parts)
