"""ChatRunner: chats that run in the service's task group, park on a question past the end
of the request that read them, and go on for the request that answers."""

from __future__ import annotations

from collections.abc import AsyncIterator

import anyio
import pytest

from farmhand.errors import AnswerError, ProviderError
from farmhand.runtime.events import InputRequested, TextChunk
from farmhand.runtime.questions import PendingAnswers
from farmhand.service.mcp_chat import McpChatEvent
from farmhand.service.parked import ChatEvent, ChatRunner
from farmhand.toolsets.mcp.elicitation import Asker, Question

pytestmark = pytest.mark.anyio

APPROVE = Question("gate", "Run gate:wipe?", "approval", tool="wipe", arguments={})


class AskingChat:
    """A chat that says hello, asks, and says what the answer was; records how it ended."""

    def __init__(self) -> None:
        self.ended = "running"

    async def __call__(self, asker: Asker) -> AsyncIterator[McpChatEvent]:
        try:
            yield TextChunk("hello")
            answer = await asker(APPROVE)
            yield TextChunk(f"{answer.action}:{answer.reason}")
            self.ended = "finished"
        except anyio.get_cancelled_exc_class():
            self.ended = "cancelled"
            raise


async def drain(events: AsyncIterator[ChatEvent]) -> list[ChatEvent]:
    return [event async for event in events]


async def settled(runner: ChatRunner) -> None:
    with anyio.fail_after(10):
        while runner.running:
            await anyio.sleep(0.01)


async def test_a_chat_parks_on_its_question_and_goes_on_for_the_answer() -> None:
    chat = AskingChat()
    async with ChatRunner(PendingAnswers()) as runner:
        first = await drain(runner.read(runner.start(chat)))
        assert first[0] == TextChunk("hello") and isinstance(first[-1], InputRequested)
        question = first[-1].id
        assert runner.parked == [question] and chat.ended == "running"

        with pytest.raises(AnswerError) as unknown:
            runner.answer("ask_other", "accept")
        assert unknown.value.unknown

        rest = await drain(runner.read(runner.answer(question, "decline", reason="no")))
        assert rest == [TextChunk("decline:no")]
        await settled(runner)
        assert chat.ended == "finished" and runner.parked == []


async def test_an_unanswered_question_is_declined_and_the_chat_ends_unread() -> None:
    chat = AskingChat()
    answers = PendingAnswers(timeout=0.05)
    async with ChatRunner(answers) as runner:
        events = await drain(runner.read(runner.start(chat)))
        assert isinstance(events[-1], InputRequested)
        await settled(runner)
        assert chat.ended == "finished" and runner.parked == [] and answers.pending == []
        with pytest.raises(AnswerError):
            runner.answer(events[-1].id, "accept")


async def test_a_reader_that_leaves_early_cancels_its_chat() -> None:
    chat = AskingChat()
    async with ChatRunner(PendingAnswers()) as runner:
        events = runner.read(runner.start(chat))
        assert await anext(events) == TextChunk("hello")
        await events.aclose()
        await settled(runner)
        assert chat.ended == "cancelled" and runner.parked == []


async def test_shutdown_cancels_parked_chats() -> None:
    chat = AskingChat()
    answers = PendingAnswers()
    async with ChatRunner(answers) as runner:
        await drain(runner.read(runner.start(chat)))
        assert runner.parked
    assert chat.ended == "cancelled" and runner.running == 0 and answers.pending == []
    with pytest.raises(RuntimeError, match="not open"):
        runner.start(chat)


async def test_what_the_chat_raises_the_reader_raises() -> None:
    async def failing(_: Asker) -> AsyncIterator[McpChatEvent]:
        yield TextChunk("a")
        raise ProviderError("the model went away")

    async with ChatRunner(PendingAnswers()) as runner:
        events = runner.read(runner.start(failing))
        with pytest.raises(ProviderError, match="went away"):
            await drain(events)
