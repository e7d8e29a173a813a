"""PromptBasedProvider over the scripted provider: the system block, the history it sends,
the calls it reads back, and handing the tools to a provider that can constrain them."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Sequence

import pytest

from farmhand.config.models import ModelConfig
from farmhand.messages import (
    Finish,
    Message,
    ReasoningDelta,
    StreamEvent,
    TextDelta,
    ToolCall,
    ToolCallEvent,
    ToolResult,
    Usage,
)
from farmhand.providers.base import GenerationSettings, GrammarTarget, Provider
from farmhand.providers.factory import provider_for
from farmhand.providers.prompt_based import PromptBasedProvider
from farmhand.providers.scripted import ScriptedProvider, Step
from farmhand.tools.choice import NONE, ToolChoice
from farmhand.tools.definition import ToolDefinition

pytestmark = pytest.mark.anyio

WEATHER = ToolDefinition(
    "get_weather",
    "Get the weather.",
    {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)
ADD = ToolDefinition(
    "add_numbers",
    "Add two integers.",
    {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "required": ["a", "b"],
    },
)
TOOLS = [WEATHER, ADD]
AUTO = GenerationSettings(temperature=0)

BLOCK = (
    "You may call one or more tools to assist with the user query.\n"
    "You are provided with function signatures within <tools></tools> XML tags:\n"
    "<tools>\n"
    '<tool>{"type": "function", "function": {"name": "get_weather", "description": "Get the'
    ' weather.", "parameters": {"type": "object", "properties": {"city": {"type": "string"}},'
    ' "required": ["city"]}}}</tool>\n'
    '<tool>{"type": "function", "function": {"name": "add_numbers", "description": "Add two'
    ' integers.", "parameters": {"type": "object", "properties": {"a": {"type": "integer"},'
    ' "b": {"type": "integer"}}, "required": ["a", "b"]}}}</tool>\n'
    "</tools>\n"
    "For each tool call, return a json object with function name and arguments within"
    " <tool_call></tool_call> XML tags:\n"
    "<tool_call>\n"
    '{"name": <function-name>, "arguments": <args-json-object>}\n'
    "</tool_call>"
)


async def turn(
    provider: Provider,
    messages: Sequence[Message] = (Message.user("hi"),),
    tools: Sequence[ToolDefinition] = TOOLS,
    settings: GenerationSettings = AUTO,
) -> list[StreamEvent]:
    return [event async for event in provider.stream(messages, tools, settings)]


def calls(events: list[StreamEvent]) -> list[tuple[str, dict[str, object]]]:
    return [(e.call.name, e.call.arguments) for e in events if isinstance(e, ToolCallEvent)]


def text(events: list[StreamEvent]) -> str:
    return "".join(e.text for e in events if isinstance(e, TextDelta))


async def test_appends_the_block_to_the_system_prompt_and_sends_no_tools() -> None:
    inner = ScriptedProvider([Step.text("Hello.")])
    await turn(PromptBasedProvider(inner), [Message.system("Be brief."), Message.user("hi")])
    request = inner.requests[0]
    assert request.tools == ()
    assert request.messages == (Message.system("Be brief.\n\n" + BLOCK), Message.user("hi"))


async def test_adds_a_system_message_when_there_is_none() -> None:
    inner = ScriptedProvider([Step.text("Hello.")])
    await turn(PromptBasedProvider(inner))
    assert inner.requests[0].messages == (Message.system(BLOCK), Message.user("hi"))


async def test_history_becomes_plain_turns() -> None:
    paris = ToolCall("get_weather", {"city": "Paris"}, id="c1")
    add = ToolCall("add_numbers", {"a": 1, "b": 2}, id="c2")
    history = [
        Message.user("Weather in Paris, and 1+2?"),
        Message.assistant("Let me look.", (paris, add)),
        Message.tool(ToolResult("c1", "get_weather", "sunny")),
        Message.tool(ToolResult("c2", "add_numbers", "3")),
        Message.assistant("Sunny, and 3."),
        Message.user("Thanks"),
    ]
    inner = ScriptedProvider([Step.text("You're welcome.")])
    await turn(PromptBasedProvider(inner), history)
    assert inner.requests[0].messages[1:] == (
        Message.user("Weather in Paris, and 1+2?"),
        Message.assistant(
            "Let me look.\n"
            '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>\n'
            '<tool_call>\n{"name": "add_numbers", "arguments": {"a": 1, "b": 2}}\n</tool_call>'
        ),
        Message.user(
            "<tool_response>\nsunny\n</tool_response>\n<tool_response>\n3\n</tool_response>"
        ),
        Message.assistant("Sunny, and 3."),
        Message.user("Thanks"),
    )


async def test_several_calls_in_one_turn_become_call_events() -> None:
    reply = (
        "Checking both.\n"
        '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Oslo"}}\n</tool_call>\n'
        '<tool_call>\n{"name": "add_numbers", "arguments": {"a": 2, "b": 5}}\n</tool_call>'
    )
    inner = ScriptedProvider([Step.text(reply, reasoning="Two tools.", usage=Usage(9, 4))])
    events = await turn(PromptBasedProvider(inner))
    assert calls(events) == [("get_weather", {"city": "Oslo"}), ("add_numbers", {"a": 2, "b": 5})]
    assert text(events).strip() == "Checking both."
    assert "".join(e.text for e in events if isinstance(e, ReasoningDelta)) == "Two tools."
    assert events[-1] == Finish("tool_calls", Usage(9, 4))


async def test_a_plain_answer_stays_text() -> None:
    inner = ScriptedProvider([Step.text("It is 3.", usage=Usage(5, 2))])
    events = await turn(PromptBasedProvider(inner))
    assert text(events) == "It is 3."
    assert calls(events) == []
    assert events[-1] == Finish("stop", Usage(5, 2))


async def test_choice_none_sends_no_block_and_parses_nothing() -> None:
    reply = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Oslo"}}\n</tool_call>'
    inner = ScriptedProvider([Step.text(reply)])
    none = GenerationSettings(tool_choice=NONE)
    events = await turn(PromptBasedProvider(inner), [Message.system("Be brief.")], settings=none)
    assert inner.requests[0].messages == (Message.system("Be brief."),)
    assert inner.requests[0].tools == ()
    assert text(events) == reply
    assert events[-1] == Finish("stop")


class ConstrainingInner(ScriptedProvider):
    """A scripted provider that, like the embedded one, takes `grammar_tools`."""

    accepts_grammar_tools = True

    def __init__(self, steps: Sequence[Step]) -> None:
        super().__init__(steps)
        self.grammar_tools: list[tuple[ToolDefinition, ...] | None] = []

    def stream(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolDefinition],
        settings: GenerationSettings,
        *,
        grammar_tools: Sequence[ToolDefinition] | None = None,
    ) -> AsyncGenerator[StreamEvent, None]:
        self.grammar_tools.append(None if grammar_tools is None else tuple(grammar_tools))
        return super().stream(messages, tools, settings)


async def test_hands_the_tools_and_the_choice_to_a_provider_that_constrains() -> None:
    call = ToolCall("add_numbers", {"a": 1, "b": 1})
    inner = ConstrainingInner([Step.calls(call)])  # it reads its own <tool_call> tags
    assert isinstance(inner, GrammarTarget)
    assert not isinstance(ScriptedProvider([]), GrammarTarget)
    named = GenerationSettings(tool_choice=ToolChoice.tool("add_numbers"))
    events = await turn(PromptBasedProvider(inner), settings=named)
    assert inner.grammar_tools == [tuple(TOOLS)]
    assert inner.requests[0].tools == ()
    assert inner.requests[0].settings == named
    assert calls(events) == [("add_numbers", {"a": 1, "b": 1})]
    assert events[-1] == Finish("tool_calls")


async def test_is_a_provider_named_after_its_inner_and_closes_it() -> None:
    inner = ScriptedProvider([], name="ollama")
    wrapper = PromptBasedProvider(inner)
    assert isinstance(wrapper, Provider)
    assert wrapper.name == "ollama"
    await wrapper.aclose()
    assert inner.closed


async def test_provider_for_wraps_a_prompt_based_model() -> None:
    def model(strategy: str) -> ModelConfig:
        return ModelConfig.model_validate(
            {
                "name": "m",
                "provider": "openai",
                "model": "some-model",
                "base_url": "http://127.0.0.1:9/v1",
                "tool_call_strategy": strategy,
            }
        )

    wrapped = provider_for(model("prompt_based"))
    native = provider_for(model("native_api"))
    assert isinstance(wrapped, PromptBasedProvider)
    assert wrapped.inner.name == "openai"
    assert not isinstance(native, PromptBasedProvider)
    await wrapped.aclose()
    await native.aclose()
