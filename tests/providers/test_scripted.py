from collections.abc import Sequence

import pytest

from farmhand.errors import ProviderError
from farmhand.messages import (
    Finish,
    Message,
    ReasoningDelta,
    StreamEvent,
    TextDelta,
    ToolCall,
    ToolCallEvent,
    Usage,
)
from farmhand.providers.base import GenerationSettings, Provider
from farmhand.providers.scripted import ScriptedProvider, ScriptedRequest, Step
from farmhand.tools.definition import ToolDefinition

pytestmark = pytest.mark.anyio

SETTINGS = GenerationSettings(temperature=0)
TOOLS = [ToolDefinition("fs:read")]
READ = ToolCall("fs:read", {"path": "a.txt"}, id="call_1")


async def turn(
    provider: ScriptedProvider,
    messages: Sequence[Message] = (Message.user("hi"),),
    tools: Sequence[ToolDefinition] = TOOLS,
) -> list[StreamEvent]:
    return [event async for event in provider.stream(messages, tools, SETTINGS)]


def test_is_a_provider() -> None:
    assert isinstance(ScriptedProvider([]), Provider)
    assert ScriptedProvider([], name="fake").name == "fake"


async def test_text_step_streams_in_chunks() -> None:
    events = await turn(ScriptedProvider([Step.text("The file says hello.")]))
    assert len(events) > 2
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "The file says hello."
    assert events[-1] == Finish("stop")


async def test_calls_step_with_text_reasoning_and_usage() -> None:
    other = ToolCall("fs:list", {})
    step = Step.calls(READ, other, text="Reading.", reasoning="Need it.", usage=Usage(5, 3))
    events = await turn(ScriptedProvider([step]))
    kinds = [type(e) for e in events]
    assert kinds == [
        ReasoningDelta,
        ReasoningDelta,
        TextDelta,
        ToolCallEvent,
        ToolCallEvent,
        Finish,
    ]
    assert events[3:] == [
        ToolCallEvent(READ),
        ToolCallEvent(other),
        Finish("tool_calls", Usage(5, 3)),
    ]


async def test_plain_event_lists_get_a_finish() -> None:
    provider = ScriptedProvider(
        [[TextDelta("a")], [ToolCallEvent(READ)], [TextDelta("b"), Finish("length")]]
    )
    assert await turn(provider) == [TextDelta("a"), Finish("stop")]
    assert await turn(provider) == [ToolCallEvent(READ), Finish("tool_calls")]
    assert await turn(provider) == [TextDelta("b"), Finish("length")]
    provider.assert_done()


def test_a_finish_in_the_middle_is_a_script_bug() -> None:
    with pytest.raises(ValueError, match="last event"):
        Step((Finish("stop"), TextDelta("late")))
    with pytest.raises(ValueError, match="at least one"):
        Step.calls()


async def test_exceptions_are_raised_from_stream() -> None:
    provider = ScriptedProvider([ProviderError("server down"), Step.fail(TimeoutError("slow"))])
    with pytest.raises(ProviderError, match="server down"):
        await turn(provider)
    with pytest.raises(TimeoutError):
        await turn(provider)
    provider.assert_done()


async def test_requests_are_recorded() -> None:
    provider = ScriptedProvider([Step.calls(READ), Step.text("done")])
    first = [Message.user("read a.txt")]
    await turn(provider, first)
    second = [*first, Message.assistant(tool_calls=(READ,))]
    await turn(provider, second, tools=[])
    assert provider.requests == [
        ScriptedRequest(tuple(first), tuple(TOOLS), SETTINGS),
        ScriptedRequest(tuple(second), (), SETTINGS),
    ]
    messages, tools, settings = provider.requests[1]
    assert (messages[-1].tool_calls, tools, settings) == ((READ,), (), SETTINGS)


async def test_expectations_see_what_the_turn_received() -> None:
    seen: list[tuple[Sequence[Message], Sequence[ToolDefinition]]] = []

    def last_user_asked(messages: Sequence[Message], tools: Sequence[ToolDefinition]) -> None:
        seen.append((messages, tools))
        assert messages[-1].content == "read a.txt", messages[-1].content

    provider = ScriptedProvider([Step.text("ok", expect=last_user_asked)] * 2)
    await turn(provider, [Message.user("read a.txt")])
    assert seen[0][1] == TOOLS
    with pytest.raises(AssertionError, match="something else"):
        await turn(provider, [Message.user("something else")])


async def test_an_unexpected_turn_is_a_provider_error() -> None:
    provider = ScriptedProvider([Step.text("only one")])
    await turn(provider)
    with pytest.raises(ProviderError) as caught:
        await turn(provider, [Message.user("again?")])
    message = str(caught.value)
    assert message.startswith("scripted provider: unexpected model turn 2; script has only 1 steps")
    assert "again?" in message


async def test_assert_done_names_the_unused_steps() -> None:
    provider = ScriptedProvider([Step.text("first"), Step.calls(READ), Step.fail(KeyError("x"))])
    await turn(provider)
    assert [s.describe() for s in provider.remaining] == ["calls fs:read", "raise KeyError('x')"]
    with pytest.raises(AssertionError) as caught:
        provider.assert_done()
    message = str(caught.value)
    assert "2 of 3 steps were not used" in message
    assert "step 2 (calls fs:read)" in message
    assert "step 3 (raise KeyError('x'))" in message


async def test_steps_can_be_added_later_and_aclose_never_raises() -> None:
    provider = ScriptedProvider()
    provider.add(Step.text("late"))
    assert (await turn(provider))[-1] == Finish("stop")
    provider.assert_done()
    await provider.aclose()
    await provider.aclose()
    assert provider.closed
