"""The API's pause: a tool loop that stops at a server's question or an approval, reports it
as InputRequested, and goes on with the answer given through PendingAnswers.

The loops here run as `farmhand serve` runs them: servers from a long-lived MCPPool, the
model a ScriptedProvider, the answers given by the reader of the events (as a dialect
would, from its client's next request)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AsyncExitStack
from typing import Any

import anyio
import pytest
from tests.support.asking import asking
from tests.support.real_servers import everything_bin

from farmhand.config.models import McpServerConfig
from farmhand.errors import AnswerError, ProviderError
from farmhand.messages import Message, ToolCall
from farmhand.providers.scripted import ScriptedProvider, Step
from farmhand.runtime.events import (
    InputRequested,
    LoopFinished,
    PausingEvent,
    ToolCallFinished,
    ToolCallStarted,
)
from farmhand.runtime.executor import ToolRouter
from farmhand.runtime.loop import run_loop
from farmhand.runtime.questions import PendingAnswers, QuestionRelay
from farmhand.runtime.session import ServerToolsets, ToolSettings
from farmhand.tools.definition import ToolDefinition
from farmhand.toolsets.mcp.elicitation import Answer, Question
from farmhand.toolsets.mcp.pool import MCPPool

pytestmark = pytest.mark.anyio

PIZZA = Question(
    "asking",
    "Which pizza?",
    schema={
        "type": "object",
        "properties": {"name": {"type": "string"}, "toppings": {"type": "integer", "default": 2}},
        "required": ["name"],
    },
)

Respond = Callable[[InputRequested], Answer | None]


async def conversation(
    servers: Sequence[McpServerConfig],
    steps: list[Step],
    respond: Respond,
    answers: PendingAnswers | None = None,
) -> tuple[list[PausingEvent], ScriptedProvider]:
    """Run one loop over `servers` with the relay as its asker; `respond` answers each
    question as it is read (None: leave it unanswered)."""
    answers = answers or PendingAnswers()
    provider = ScriptedProvider(steps)
    events: list[PausingEvent] = []
    async with MCPPool() as pool, QuestionRelay(answers) as relay, AsyncExitStack() as stack:
        opener = ServerToolsets(ToolSettings(tool_timeout=20), pool=pool, asker=relay)
        router = ToolRouter(await opener.enter_all(stack, servers))
        await router.list_tools()
        async for event in relay.run(run_loop(provider, [Message.user("go")], router)):
            events.append(event)
            if isinstance(event, InputRequested):
                assert answers.get(event.id) == event
                reply = respond(event)
                if reply is not None:
                    answers.answer(event.id, reply)
    provider.assert_done()
    return events, provider


def kinds(events: list[PausingEvent]) -> list[str]:
    shown = (ToolCallStarted, InputRequested, ToolCallFinished, LoopFinished)
    return [type(e).__name__ for e in events if isinstance(e, shown)]


def results(events: list[PausingEvent]) -> list[str]:
    return [e.result.content for e in events if isinstance(e, ToolCallFinished)]


def tool_message(expected: str) -> Callable[[Sequence[Message], Sequence[ToolDefinition]], None]:
    def check(messages: Sequence[Message], tools: Sequence[ToolDefinition]) -> None:
        assert messages[-1].role == "tool"
        assert expected in messages[-1].content

    return check


# -- PendingAnswers ------------------------------------------------------------------------


async def test_an_answer_resolves_the_waiting_question() -> None:
    answers = PendingAnswers()
    request = answers.open(PIZZA)
    assert answers.pending == [request]
    got: list[Answer] = []
    async with anyio.create_task_group() as group:

        async def wait() -> None:
            got.append(await answers.wait(request))

        group.start_soon(wait)
        await anyio.sleep(0)
        answers.answer(request.id, Answer.accept({"name": "Ada"}))
    assert got == [Answer.accept({"name": "Ada"})]
    assert answers.pending == [] and answers.get(request.id) is None


async def test_an_unanswered_question_is_declined_after_the_timeout() -> None:
    answers = PendingAnswers(timeout=0.05)
    request = answers.open(PIZZA)
    answer = await answers.wait(request)
    assert (answer.action, answer.reason) == ("decline", "no answer came within 0.05 s")
    with pytest.raises(AnswerError, match="no open question") as raised:
        answers.answer(request.id, Answer.accept({"name": "late"}))
    assert raised.value.unknown


def test_an_answer_to_no_question_is_an_error() -> None:
    with pytest.raises(AnswerError, match="'ask_nope'") as raised:
        PendingAnswers().answer("ask_nope", Answer.decline())
    assert raised.value.unknown


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ({}, "'name' is a required property"),
        ({"name": "Ada", "toppings": "many"}, "toppings: 'many' is not of type 'integer'"),
    ],
)
def test_an_answer_that_does_not_fit_the_form_is_refused_and_the_question_stays_open(
    content: dict[str, Any], problem: str
) -> None:
    answers = PendingAnswers()
    request = answers.open(PIZZA)
    with pytest.raises(AnswerError, match="does not fit") as raised:
        answers.answer(request.id, Answer.accept(content))
    assert problem in str(raised.value) and not raised.value.unknown
    answers.answer(request.id, Answer.accept({"name": "Ada"}))  # a fitting one is taken


# -- QuestionRelay: the loop pauses at the question --------------------------------------


async def test_the_loop_pauses_at_a_servers_question_and_goes_on_with_the_answer() -> None:
    events, _ = await conversation(
        [asking()],
        [
            Step.calls(ToolCall("asking:order_pizza", {})),
            Step.text("Ordered.", expect=tool_message("a large pizza with 2 toppings for Grace")),
        ],
        lambda asked: Answer.accept({"name": "Grace"}),
    )
    assert kinds(events) == [
        "ToolCallStarted",
        "InputRequested",
        "ToolCallFinished",
        "LoopFinished",
    ]
    (asked,) = [e for e in events if isinstance(e, InputRequested)]
    assert asked.id.startswith("ask_")
    assert (asked.question.server, asked.question.tool) == ("asking", "order_pizza")
    assert asked.question.message == "Which pizza shall I order?"
    assert asked.question.schema["required"] == ["name"]
    assert results(events) == ["ordered a large pizza with 2 toppings for Grace"]


async def test_a_question_nobody_answers_is_declined_when_its_time_is_up() -> None:
    events, _ = await conversation(
        [asking()],
        [
            Step.calls(ToolCall("asking:order_pizza", {})),
            Step.text("No pizza.", expect=tool_message("the user chose decline")),
        ],
        lambda asked: None,
        PendingAnswers(timeout=0.2),
    )
    assert kinds(events)[:2] == ["ToolCallStarted", "InputRequested"]


async def test_an_approval_pauses_the_loop_and_a_decline_reaches_the_model() -> None:
    server = asking(require_approval="destructive")
    events, _ = await conversation(
        [server],
        [
            Step.calls(ToolCall("asking:wipe", {"target": "/data"})),
            Step.text("Not wiped.", expect=tool_message("asking:wipe was not run")),
        ],
        lambda asked: Answer.decline(),
    )
    (asked,) = [e for e in events if isinstance(e, InputRequested)]
    assert asked.question.kind == "approval"
    assert (asked.question.tool, asked.question.arguments) == ("wipe", {"target": "/data"})
    assert results(events) == [
        "asking:wipe was not run: the user declined it. Do not call it again unless asked."
    ]


async def test_an_approved_call_runs() -> None:
    events, _ = await conversation(
        [asking(require_approval="always")],
        [Step.calls(ToolCall("asking:peek", {})), Step.text("Fine.")],
        lambda asked: Answer.accept(),
    )
    assert results(events) == ["all there"]


async def test_what_the_loop_raises_reaches_the_reader() -> None:
    with pytest.raises(ProviderError, match="backend down"):
        await conversation([], [Step.fail(ProviderError("backend down"))], lambda asked: None)


async def test_server_everything_elicits_through_the_pause() -> None:
    """The reference server's own elicitation tool (a form of 13 fields of every kind, only
    `name` required), answered as an API client would."""
    everything = McpServerConfig(name="everything", command=everything_bin(), args=["stdio"])
    tool = "everything:trigger-elicitation-request"
    events, provider = await conversation(
        [everything],
        [
            Step.calls(ToolCall(tool, {})),
            Step.text("Done.", expect=tool_message("- Name: Ada Lovelace")),
        ],
        lambda asked: Answer.accept({"name": "Ada Lovelace", "check": True, "integer": 7}),
    )
    assert tool in [t.name for t in provider.requests[0].tools]  # listed: we declared it
    (asked,) = [e for e in events if isinstance(e, InputRequested)]
    assert asked.question.tool == "trigger-elicitation-request"
    assert asked.question.schema["required"] == ["name"]
    (result,) = results(events)
    assert "User provided the requested information" in result
    assert "- Agreed to terms: true" in result and "- Favorite Integer: 7" in result
    assert "- Favorite Number: 3.14" in result  # a default farmhand filled in
