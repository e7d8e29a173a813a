"""AnthropicProvider: Anthropic's Messages API as a backend. Against a loopback server that
sends Messages streams in small pieces (so lines and JSON split the way a network splits
them), and end to end against farmhand's own `/v1/messages` (the dialect the `anthropic`
SDK tests hold to Anthropic's shapes) serving a scripted model."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.providers.fake_backend import Server
from tests.support.farms import start
from tests.support.generators import left_to_asyncio

from farmhand.config.models import ModelConfig
from farmhand.errors import ProviderError, RequestError
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
from farmhand.providers.anthropic import AnthropicProvider
from farmhand.providers.base import GenerationSettings
from farmhand.providers.factory import provider_for
from farmhand.providers.scripted import Step
from farmhand.tools.choice import ToolChoice
from farmhand.tools.definition import ToolDefinition

pytestmark = pytest.mark.anyio

RESTOCK = ToolDefinition(
    "pantry:restock",
    "Order more of an item.",
    {"type": "object", "properties": {"item": {"type": "string"}}, "required": ["item"]},
)
ASK = [Message.user("We are out of flour.")]


def sse(*events: dict[str, Any]) -> bytes:
    """A Messages stream: each event with its `event:` line, as Anthropic sends it."""
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()


def start_message(input_tokens: int = 12) -> dict[str, Any]:
    usage = {"input_tokens": input_tokens, "output_tokens": 1}
    return {
        "type": "message_start",
        "message": {"id": "msg_1", "role": "assistant", "usage": usage},
    }


def block(index: int, **content: Any) -> dict[str, Any]:
    return {"type": "content_block_start", "index": index, "content_block": content}


def delta(index: int, **fields: Any) -> dict[str, Any]:
    return {"type": "content_block_delta", "index": index, "delta": fields}


def stop(index: int) -> dict[str, Any]:
    return {"type": "content_block_stop", "index": index}


def end(reason: str, output_tokens: int = 9, sequence: str | None = None) -> list[dict[str, Any]]:
    finished = {"stop_reason": reason, "stop_sequence": sequence}
    return [
        {"type": "message_delta", "delta": finished, "usage": {"output_tokens": output_tokens}},
        {"type": "message_stop"},
    ]


async def run(
    provider: AnthropicProvider,
    messages: list[Message] = ASK,
    tools: list[ToolDefinition] | None = None,
    settings: GenerationSettings | None = None,
) -> list[StreamEvent]:
    try:
        events = provider.stream(messages, tools or [RESTOCK], settings or GenerationSettings())
        return [event async for event in events]
    finally:
        await provider.aclose()


def anthropic(server: Server, **kwargs: Any) -> AnthropicProvider:
    return AnthropicProvider("claude-test", api_key="sk-ant-test", base_url=server.url, **kwargs)


async def test_text_thinking_and_a_call_come_back_from_a_split_stream() -> None:
    arguments = json.dumps({"item": "flour, 5 kg"})
    server = Server(
        sse(
            start_message(),
            {"type": "ping"},
            block(0, type="thinking", thinking=""),
            delta(0, type="thinking_delta", thinking="Flour is out; "),
            delta(0, type="thinking_delta", thinking="order it."),
            delta(0, type="signature_delta", signature="c2ln"),
            stop(0),
            block(1, type="text", text=""),
            delta(1, type="text_delta", text="Ordering "),
            delta(1, type="text_delta", text="flour."),
            stop(1),
            block(2, type="tool_use", id="toolu_01", name="pantry__restock", input={}),
            *[
                delta(2, type="input_json_delta", partial_json=arguments[i : i + 5])
                for i in range(0, len(arguments), 5)
            ],
            stop(2),
            *end("tool_use", output_tokens=31),
        ),
        split=9,
    )
    with left_to_asyncio() as left:  # message_stop ends the reading: the reader is closed
        events = await run(anthropic(server))
    assert left == []
    assert events == [
        ReasoningDelta("Flour is out; "),
        ReasoningDelta("order it."),
        TextDelta("Ordering "),
        TextDelta("flour."),
        ToolCallEvent(ToolCall("pantry:restock", {"item": "flour, 5 kg"}, "toolu_01")),
        Finish("tool_calls", Usage(12, 31)),
    ]
    sent = server.requests[-1]
    assert sent.path == "/v1/messages"
    assert sent.headers["x-api-key"] == "sk-ant-test"
    assert sent.headers["anthropic-version"] == "2023-06-01"
    assert server.sent["tools"] == [
        {
            "name": "pantry__restock",
            "input_schema": RESTOCK.parameters,
            "description": "Order more of an item.",
        }
    ]
    assert server.sent["tool_choice"] == {"type": "auto"}
    assert server.sent["stream"] is True and server.sent["max_tokens"] == 4096


async def test_the_conversation_goes_over_in_anthropic_shape() -> None:
    server = Server(sse(start_message(), *end("end_turn")))
    call = ToolCall("pantry:restock", {"item": "flour"}, "toolu_9")
    history = [
        Message.system("You keep the pantry."),
        Message.system("Be brief."),
        Message.user("We are out of flour."),
        Message.assistant("", ()),  # an empty turn: Anthropic refuses empty text blocks
        Message.assistant("On it.", (call,)),
        Message.tool(ToolResult("toolu_9", "pantry:restock", "ordered")),
        Message.user("Thanks. Anything else?"),
    ]
    settings = GenerationSettings(
        max_tokens=300, temperature=0.2, stop=("END",), tool_choice=ToolChoice("required")
    )
    await run(anthropic(server), history, settings=settings)
    sent = server.sent
    assert sent["system"] == "You keep the pantry.\n\nBe brief."
    assert sent["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "We are out of flour."}]},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "On it."},
                {
                    "type": "tool_use",
                    "id": "toolu_9",
                    "name": "pantry__restock",
                    "input": {"item": "flour"},
                },
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_9", "content": "ordered"},
                {"type": "text", "text": "Thanks. Anything else?"},
            ],
        },
    ]
    assert sent["tool_choice"] == {"type": "any"}
    assert (sent["max_tokens"], sent["temperature"], sent["stop_sequences"]) == (300, 0.2, ["END"])


@pytest.mark.parametrize(
    ("choice", "parallel", "expected"),
    [
        (ToolChoice("auto"), False, {"type": "auto", "disable_parallel_tool_use": True}),
        (ToolChoice.tool("pantry:restock"), True, {"type": "tool", "name": "pantry__restock"}),
    ],
)
async def test_tool_choice_is_spelled_as_anthropic_does(
    choice: ToolChoice, parallel: bool, expected: dict[str, Any]
) -> None:
    server = Server(sse(start_message(), *end("end_turn")))
    settings = GenerationSettings(tool_choice=choice, parallel_tool_calls=parallel)
    await run(anthropic(server), settings=settings)
    assert server.sent["tool_choice"] == expected


async def test_choice_none_sends_no_tools() -> None:
    server = Server(sse(start_message(), *end("end_turn")))
    await run(anthropic(server), settings=GenerationSettings(tool_choice=ToolChoice("none")))
    assert "tools" not in server.sent and "tool_choice" not in server.sent


async def test_a_stop_sequence_and_the_token_limit_are_reported() -> None:
    server = Server(sse(start_message(3), *end("stop_sequence", 2, sequence="END")))
    assert (await run(anthropic(server)))[-1] == Finish("stop", Usage(3, 2), "END")
    server = Server(sse(start_message(3), *end("max_tokens", 7)))
    assert (await run(anthropic(server)))[-1] == Finish("length", Usage(3, 7))


async def test_a_whole_answer_when_the_caller_does_not_stream() -> None:
    message = {
        "type": "message",
        "role": "assistant",
        "content": [
            {"type": "text", "text": "Ordering."},
            {
                "type": "tool_use",
                "id": "toolu_2",
                "name": "pantry__restock",
                "input": {"item": "rye"},
            },
        ],
        "stop_reason": "tool_use",
        "usage": {"input_tokens": 5, "output_tokens": 6},
    }
    server = Server(json.dumps(message).encode(), kind="application/json")
    events = await run(anthropic(server), settings=GenerationSettings(stream=False))
    assert server.sent["stream"] is False
    assert events == [
        TextDelta("Ordering."),
        ToolCallEvent(ToolCall("pantry:restock", {"item": "rye"}, "toolu_2")),
        Finish("tool_calls", Usage(5, 6)),
    ]


async def test_thinking_asked_for_gets_a_budget_under_max_tokens() -> None:
    server = Server(sse(start_message(), *end("end_turn")))
    await run(anthropic(server), settings=GenerationSettings(think=True, max_tokens=1500))
    thinking = server.sent["thinking"]
    assert thinking["type"] == "enabled"
    assert 1024 <= thinking["budget_tokens"] < server.sent["max_tokens"]


async def test_arguments_that_are_not_json_become_the_calls_parse_error() -> None:
    server = Server(
        sse(
            start_message(),
            block(0, type="tool_use", id="toolu_3", name="pantry__restock", input={}),
            delta(0, type="input_json_delta", partial_json='{"item": '),
            stop(0),
            *end("tool_use"),
        )
    )
    call = next(e.call for e in await run(anthropic(server)) if isinstance(e, ToolCallEvent))
    assert call.name == "pantry:restock" and call.arguments == {}
    assert call.parse_error is not None and "not valid JSON" in call.parse_error


async def test_a_whole_answers_call_without_a_name_is_a_parse_error() -> None:
    message = {
        "type": "message",
        "content": [{"type": "tool_use", "id": "toolu_4", "input": {"item": "rye"}}],
        "stop_reason": "tool_use",
        "usage": {"input_tokens": 1, "output_tokens": 1},
    }
    server = Server(json.dumps(message).encode(), kind="application/json")
    events = await run(anthropic(server), settings=GenerationSettings(stream=False))
    call = next(e.call for e in events if isinstance(e, ToolCallEvent))
    assert (call.name, call.arguments, call.id) == ("", {}, "toolu_4")
    assert call.parse_error is not None and "has no name" in call.parse_error


async def test_errors_say_what_the_server_said_and_what_to_check() -> None:
    refusal = {
        "type": "error",
        "error": {"type": "authentication_error", "message": "invalid x-api-key"},
    }
    server = Server(json.dumps(refusal).encode(), status=401, kind="application/json")
    with pytest.raises(ProviderError) as caught:
        await run(anthropic(server))
    assert "HTTP 401" in str(caught.value) and "invalid x-api-key" in str(caught.value)
    assert "check the provider's api_key" in str(caught.value)

    overloaded = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    server = Server(sse(start_message(), overloaded))
    with pytest.raises(ProviderError, match="reported an error mid-stream: Overloaded"):
        await run(anthropic(server))

    openai_style = {"choices": [{"index": 0, "delta": {"content": "Hi"}}]}
    server = Server(f"data: {json.dumps(openai_style)}\n\ndata: [DONE]\n\n".encode())
    with pytest.raises(ProviderError, match="without a Messages stream"):
        await run(anthropic(server))


async def test_a_json_answer_format_is_refused_before_anything_is_sent() -> None:
    server = Server(sse(start_message(), *end("end_turn")))
    with pytest.raises(RequestError, match="cannot be held to a JSON answer"):
        await run(anthropic(server), settings=GenerationSettings(response_format="json"))
    assert server.requests == []


async def test_tokens_are_counted_by_anthropics_endpoint() -> None:
    server = Server(json.dumps({"input_tokens": 42}).encode(), kind="application/json")
    provider = anthropic(server)
    assert await provider.count_tokens(ASK, [RESTOCK]) == 42
    await provider.aclose()
    assert server.requests[-1].path == "/v1/messages/count_tokens"
    assert server.sent["tools"][0]["name"] == "pantry__restock"


def test_the_config_builds_it() -> None:
    model = ModelConfig(
        name="claude",
        provider="anthropic",
        model="claude-sonnet-4-5",
        api_key="sk-ant-x",
        base_url="http://127.0.0.1:9/v1",
    )
    provider = provider_for(model)
    assert isinstance(provider, AnthropicProvider)
    assert (provider.url, provider.model) == ("http://127.0.0.1:9/v1/messages", "claude-sonnet-4-5")


async def test_a_call_and_its_result_through_farmhands_own_messages_api(tmp_path: Path) -> None:
    # farmhand's /v1/messages serves a scripted model; this provider is its client, over
    # real HTTP and Anthropic's stream events.
    server, relay = start(tmp_path)
    relay.script.add(
        Step.calls(ToolCall("pantry__restock", {"item": "flour"}), text="Ordering."),
        Step.text("Flour is on its way."),
    )
    with server:
        provider = AnthropicProvider("farm", api_key="unused", base_url=f"{server.url}/v1")
        first = await run(provider)
        call = [e.call for e in first if isinstance(e, ToolCallEvent)]
        assert [(c.name, c.arguments) for c in call] == [("pantry:restock", {"item": "flour"})]
        assert "".join(e.text for e in first if isinstance(e, TextDelta)) == "Ordering."
        assert isinstance(first[-1], Finish) and first[-1].reason == "tool_calls"
        follow_up = [
            *ASK,
            Message.assistant("Ordering.", tuple(call)),
            Message.tool(ToolResult(call[0].id, call[0].name, "ordered 5 kg")),
        ]
        second = await run(provider, follow_up)
        assert "".join(e.text for e in second if isinstance(e, TextDelta)) == "Flour is on its way."
        assert isinstance(second[-1], Finish) and second[-1].reason == "stop"
        counted = await provider.count_tokens(ASK, [RESTOCK])
        await provider.aclose()
    seen = relay.script.requests[1].messages
    assert seen[-1] == Message.tool(ToolResult(call[0].id, "pantry__restock", "ordered 5 kg"))
    assert counted > 0


async def test_template_kwargs_are_refused_before_anything_is_sent() -> None:
    server = Server(sse(start_message(), *end("end_turn")))
    settings = GenerationSettings(template_kwargs={"enable_thinking": False})
    with pytest.raises(RequestError, match="no chat template to pass chat_template_kwargs to"):
        await run(anthropic(server), settings=settings)
    assert server.requests == []
