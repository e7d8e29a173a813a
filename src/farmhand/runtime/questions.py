"""Pausing the tool loop for the user: the questions servers ask, and approvals, over an API.

In the terminal the asker asks the person at it. Behind an HTTP API the person is the API's
client, one response away: the loop must stop at the question, tell the client, and go on
when an answer arrives, maybe in another request. Two pieces do that:

- `PendingAnswers`, one per service: the questions waiting, by id. `answer(id, ...)` resolves
  one (checked against the form's schema); one nobody answers in time is declined.
- `QuestionRelay`, one per loop run: the asker its toolsets get. It merges the questions
  into the loop's own events as `InputRequested`, so the face renders them in order, and
  waits on `PendingAnswers` for the answer.

    async with QuestionRelay(answers) as relay:
        toolsets = ServerToolsets(settings, pool=pool, asker=relay)   # then a router
        async for event in relay.run(run_loop(provider, messages, router)):
            if isinstance(event, InputRequested):
                ...  # show event.question; later: answers.answer(event.id, Answer.accept(...))

The relay runs the loop in a task of its own, so the events may be read from any task (a
later request can read on after an answer), while the relay's `async with` stays in one.

For a dialect: an `InputRequested` whose question is an approval (`kind` "approval") is an
approval request for `question.tool` on `question.server` with `question.arguments`; a form
or URL question carries `message` and `schema` or `url`. Its `id` is what the client's
answer names; `AnswerError.unknown` means that id is not open (HTTP 404), otherwise the
content did not fit the form (HTTP 400, the question stays open).
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack
from dataclasses import dataclass, field

import anyio
from anyio.abc import TaskGroup
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from farmhand.errors import AnswerError
from farmhand.runtime.events import InputRequested, LoopEvent, PausingEvent
from farmhand.toolsets.mcp.elicitation import Answer, Question, answer_problem

DEFAULT_ANSWER_TIMEOUT = 300.0
"""Seconds a question waits for its answer before it is declined."""


@dataclass
class _Waiting:
    request: InputRequested
    answered: anyio.Event = field(default_factory=anyio.Event)
    answer: Answer | None = None


class PendingAnswers:
    """The questions waiting for an answer, service-wide, by id."""

    def __init__(self, *, timeout: float = DEFAULT_ANSWER_TIMEOUT) -> None:
        self.timeout = timeout
        self._waiting: dict[str, _Waiting] = {}

    def open(self, question: Question) -> InputRequested:
        """Register a question; its event carries the id an answer must name."""
        request = InputRequested(f"ask_{uuid.uuid4().hex}", question)
        self._waiting[request.id] = _Waiting(request)
        return request

    async def wait(self, request: InputRequested, timeout: float | None = None) -> Answer:
        """The answer to an open question; a decline saying so when none comes in time.
        The question is closed when this returns (or is cancelled)."""
        waiting = self._waiting.get(request.id)
        if waiting is None:
            raise AnswerError(f"no open question {request.id!r}", unknown=True)
        limit = self.timeout if timeout is None else timeout
        try:
            with anyio.move_on_after(limit):
                await waiting.answered.wait()
        finally:
            self._waiting.pop(request.id, None)
        if waiting.answer is None:
            return Answer.decline(f"no answer came within {limit:g} s")
        return waiting.answer

    def answer(self, question_id: str, answer: Answer) -> None:
        """Resolve a question. AnswerError when it is not open (never asked, answered, or
        timed out) or when an accepted form's content does not fit the requested schema
        (the question stays open: the client may answer again)."""
        waiting = self._waiting.get(question_id)
        if waiting is None or waiting.answered.is_set():
            raise AnswerError(
                f"no open question {question_id!r}: it was answered already, timed out, or"
                " never asked",
                unknown=True,
            )
        problem = answer_problem(waiting.request.question, answer)
        if problem is not None:
            raise AnswerError(f"the answer does not fit the question's form: {problem}")
        waiting.answer = answer
        waiting.answered.set()

    def discard(self, question_id: str) -> None:
        """Forget a question without answering it."""
        self._waiting.pop(question_id, None)

    def get(self, question_id: str) -> InputRequested | None:
        waiting = self._waiting.get(question_id)
        return waiting.request if waiting else None

    @property
    def pending(self) -> list[InputRequested]:
        """The open questions, oldest first."""
        return [w.request for w in self._waiting.values() if not w.answered.is_set()]


class QuestionRelay:
    """The asker of one loop run: each question becomes an `InputRequested` among the
    loop's events, answered through `PendingAnswers`. Use as `async with`, in one task."""

    def __init__(self, answers: PendingAnswers, *, timeout: float | None = None) -> None:
        self.answers = answers
        self.timeout = timeout
        send, receive = anyio.create_memory_object_stream[PausingEvent]()
        self._send: MemoryObjectSendStream[PausingEvent] = send
        self._receive: MemoryObjectReceiveStream[PausingEvent] = receive
        self._group: TaskGroup | None = None
        self._stack = AsyncExitStack()
        self._error: BaseException | None = None

    async def __aenter__(self) -> QuestionRelay:
        self._stack.callback(self._receive.close)
        self._stack.callback(self._send.close)
        group = await self._stack.enter_async_context(anyio.create_task_group())
        # Runs first on exit: a loop nobody reads any more must not run on.
        self._stack.callback(group.cancel_scope.cancel)
        self._group = group
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        self._group = None
        await self._stack.aclose()

    async def __call__(self, question: Question) -> Answer:
        """Ask: the question goes out as an event, and this waits for its answer."""
        request = self.answers.open(question)
        try:
            await self._send.send(request)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            self.answers.discard(request.id)
            return Answer.decline("the conversation ended before the question could be asked")
        return await self.answers.wait(request, self.timeout)

    def run(self, loop: AsyncIterator[LoopEvent]) -> AsyncIterator[PausingEvent]:
        """The loop's events with the questions among them; ends after the loop's last, and
        raises what the loop raised."""
        if self._group is None:
            raise RuntimeError("use QuestionRelay as `async with` before run()")
        self._group.start_soon(self._forward, loop)
        return self._events()

    async def _forward(self, loop: AsyncIterator[LoopEvent]) -> None:
        try:
            async for event in loop:
                await self._send.send(event)
        except Exception as exc:  # raised to the reader, not through the task group
            self._error = exc
        finally:
            self._send.close()  # the reader's iteration ends

    async def _events(self) -> AsyncIterator[PausingEvent]:
        async for event in self._receive:
            yield event
        if self._error is not None:
            raise self._error
