"""The Anthropic Messages dialect with the real `anthropic` SDK against a real uvicorn:
scripted model turns; farmhand's own /mcp over streamable HTTP as the MCP connector's server."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anthropic
import httpx
import pytest
from anthropic import Anthropic
from tests.support.farms import USER, AnthropicFarm, start
from tests.support.live import LiveServer, scripted_config

from farmhand.assembly import create_app
from farmhand.messages import (
    Finish,
    Message,
    TextDelta,
    ToolCall,
    ToolCallDelta,
    ToolCallEvent,
    Usage,
)
from farmhand.providers.scripted import ScriptedProvider, Step
from farmhand.tools.choice import NONE, REQUIRED, ToolChoice
from farmhand.tools.definition import ToolDefinition

WEATHER = {
    "name": "get_weather",
    "description": "The weather in a city.",
    "input_schema": {
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
    },
}


@pytest.fixture
def farm(anthropic_farm: AnthropicFarm) -> AnthropicFarm:
    """conftest's Anthropic farm, under the name this module's tests use."""
    return anthropic_farm


# Replies


def test_a_text_reply_is_a_message(farm: AnthropicFarm) -> None:
    farm.script.add(Step.text("Hello from the farm.", usage=Usage(12, 5)))
    reply = farm.ask(
        stop_sequences=["END", "STOP"],
        metadata={"user_id": "u1"},
        # this SDK no longer names the sampling fields; the API still takes them
        extra_body={"temperature": 0.3, "top_p": 0.9, "top_k": 40},
    )
    assert reply.type == "message" and reply.role == "assistant"
    assert reply.id.startswith("msg_")
    assert reply.model == "farm"
    assert [(b.type, b.text) for b in reply.content] == [("text", "Hello from the farm.")]
    assert (reply.stop_reason, reply.stop_sequence) == ("end_turn", None)
    assert (reply.usage.input_tokens, reply.usage.output_tokens) == (12, 5)
    settings = farm.script.requests[0].settings
    assert (settings.temperature, settings.max_tokens, settings.stream) == (0.3, 100, False)
    assert (settings.top_p, settings.top_k) == (0.9, 40)
    assert settings.stop == ("END", "STOP")


def test_system_as_string_blocks_and_messages_reach_the_model(farm: AnthropicFarm) -> None:
    def sees(messages: Sequence[Message], _: Sequence[ToolDefinition]) -> None:
        assert [(m.role, m.content) for m in messages] == [
            ("system", "Be brief. Be kind."),
            ("user", "Hi there"),
            ("system", "The time is noon."),  # Claude Code sends one inside `messages`
            ("assistant", "Hello."),
            ("user", "Again?"),
        ]
        assert messages[3].reasoning == "They greeted me."

    farm.script.add(Step.text("Yes.", expect=sees), Step.text("Still yes."))
    blocks = [{"type": "text", "text": "Be brief. "}, {"type": "text", "text": "Be kind."}]
    parts = [{"type": "text", "text": "Hi "}, {"type": "text", "text": "there"}]
    history: list[Any] = [
        {"role": "user", "content": parts},
        {"role": "system", "content": "The time is noon."},
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "They greeted me.", "signature": ""},
                {"type": "text", "text": "Hello."},
            ],
        },
        {"role": "user", "content": "Again?"},
    ]  # fmt: skip
    assert farm.ask(history, system=blocks).content[0].text == "Yes."
    farm.ask(system="Be brief.")
    assert [m.content for m in farm.script.requests[1].messages] == ["Be brief.", "hello"]


def test_max_tokens_cut_is_stop_reason_max_tokens(farm: AnthropicFarm) -> None:
    farm.script.add([TextDelta("cut sh"), Finish("length")])
    reply = farm.ask(max_tokens=2)
    assert reply.stop_reason == "max_tokens"
    assert farm.script.requests[0].settings.max_tokens == 2


def test_reasoning_is_a_thinking_block(farm: AnthropicFarm) -> None:
    farm.script.add(Step.text("42.", reasoning="Six times seven."))
    reply = farm.ask()
    assert [b.type for b in reply.content] == ["thinking", "text"]
    assert reply.content[0].thinking == "Six times seven."


# Client tools


def test_client_tool_round_trip(farm: AnthropicFarm) -> None:
    def offered(_: Sequence[Message], tools: Sequence[ToolDefinition]) -> None:
        assert [(t.name, t.parameters) for t in tools] == [("get_weather", WEATHER["input_schema"])]

    oslo = ToolCall("get_weather", {"city": "Oslo"}, "toolu_1")
    farm.script.add(Step.calls(oslo, text="Checking.", expect=offered))
    reply = farm.ask(tools=[WEATHER])
    assert reply.stop_reason == "tool_use"
    assert [b.type for b in reply.content] == ["text", "tool_use"]
    call = reply.content[1]
    assert (call.id, call.name, call.input) == ("toolu_1", "get_weather", {"city": "Oslo"})

    def sees_results(messages: Sequence[Message], _: Sequence[ToolDefinition]) -> None:
        assert messages[1].tool_calls == (
            ToolCall("get_weather", {"city": "Oslo"}, "toolu_1"),
            ToolCall("get_weather", {"city": "X"}, "toolu_2"),
        )
        assert messages[1].content == "Checking."
        results = [(m.role, m.tool_call_id, m.name, m.content) for m in messages[2:]]
        assert results == [
            ("tool", "toolu_1", "get_weather", "Sunny, 21 C"),
            ("tool", "toolu_2", "get_weather", "Error: no such city"),
            ("user", None, None, "Thanks"),
        ]

    farm.script.add(Step.text("It is sunny in Oslo.", expect=sees_results))
    second = {"type": "tool_use", "id": "toolu_2", "name": "get_weather", "input": {"city": "X"}}
    follow_up = farm.ask(
        [
            *USER,
            {"role": "assistant", "content": [*[b.model_dump() for b in reply.content], second]},
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_1", "content": "Sunny, 21 C"},
                    {
                        "type": "tool_result",
                        "tool_use_id": "toolu_2",
                        "content": [{"type": "text", "text": "no such city"}],
                        "is_error": True,
                    },
                    {"type": "text", "text": "Thanks"},
                ],
            },
        ],
        tools=[WEATHER],
    )
    assert follow_up.content[0].text == "It is sunny in Oslo."
    assert follow_up.stop_reason == "end_turn"


@pytest.mark.parametrize(
    ("choice", "expected", "parallel"),
    [
        ({"type": "auto"}, ToolChoice("auto"), True),
        ({"type": "any"}, REQUIRED, True),
        ({"type": "tool", "name": "get_weather"}, ToolChoice.tool("get_weather"), True),
        ({"type": "none"}, NONE, True),
        ({"type": "any", "disable_parallel_tool_use": True}, REQUIRED, False),
    ],
)
def test_tool_choice_reaches_the_model(
    farm: AnthropicFarm, choice: dict[str, Any], expected: ToolChoice, parallel: bool
) -> None:
    farm.script.add(Step.text("ok"))
    farm.ask(tools=[WEATHER], tool_choice=choice)
    settings = farm.script.requests[0].settings
    assert (settings.tool_choice, settings.parallel_tool_calls) == (expected, parallel)


def test_a_tool_choice_naming_no_offered_tool_is_400(farm: AnthropicFarm) -> None:
    with pytest.raises(anthropic.BadRequestError, match="get_wether") as raised:
        farm.ask(tools=[WEATHER], tool_choice={"type": "tool", "name": "get_wether"})
    assert raised.value.body["error"]["type"] == "invalid_request_error"


# Streaming


def test_stream_events_in_order_and_the_final_message(farm: AnthropicFarm) -> None:
    farm.script.add(Step.text("one two three", reasoning="Count up.", usage=Usage(4, 3)))
    with farm.client.messages.stream(model="farm", max_tokens=50, messages=USER) as stream:
        events = list(stream)
        final = stream.get_final_message()
    raw = [e.type for e in events if e.type not in ("text", "thinking")]
    assert raw == [
        "message_start",
        "content_block_start",
        "content_block_delta",
        "content_block_delta",
        "content_block_stop",
        "content_block_start",
        "content_block_delta",
        "content_block_delta",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
    ]
    texts = [
        e.delta.text
        for e in events
        if e.type == "content_block_delta" and e.delta.type == "text_delta"
    ]
    assert texts == ["one ", "two ", "three"]  # fmt: skip
    assert [b.type for b in final.content] == ["thinking", "text"]
    assert final.content[0].thinking == "Count up."
    assert final.content[1].text == "one two three"
    assert final.stop_reason == "end_turn"
    assert (final.usage.input_tokens, final.usage.output_tokens) == (4, 3)
    assert farm.script.requests[0].settings.stream is True


def test_streamed_tool_use_has_input_json_deltas(farm: AnthropicFarm) -> None:
    farm.script.add(
        Step.calls(
            ToolCall("get_weather", {"city": "Oslo"}, "toolu_a"),
            ToolCall("get_weather", {"city": "Bergen"}, "toolu_b"),
        )
    )
    with farm.client.messages.stream(
        model="farm", max_tokens=50, messages=USER, tools=[WEATHER]
    ) as stream:
        events = list(stream)
        final = stream.get_final_message()
    partial = [e.delta.partial_json for e in events if e.type == "content_block_delta"]
    assert [json.loads(p) for p in partial] == [{"city": "Oslo"}, {"city": "Bergen"}]
    assert [(b.type, b.id, b.input) for b in final.content] == [
        ("tool_use", "toolu_a", {"city": "Oslo"}),
        ("tool_use", "toolu_b", {"city": "Bergen"}),
    ]
    assert final.stop_reason == "tool_use"


def test_a_call_written_in_pieces_streams_in_pieces(farm: AnthropicFarm) -> None:
    oslo = ToolCall("get_weather", {"city": "Oslo"}, "toolu_p")
    farm.script.add(
        [
            TextDelta("Let me check."),
            ToolCallDelta(0, name="get_weather", id="toolu_p"),
            ToolCallDelta(0, arguments='{"city": '),
            ToolCallDelta(0, arguments='"Oslo"}'),
            ToolCallEvent(oslo),
            Finish("tool_calls"),
        ]
    )
    with farm.client.messages.stream(
        model="farm", max_tokens=50, messages=USER, tools=[WEATHER]
    ) as stream:
        events = list(stream)
        final = stream.get_final_message()
    starts = [e.content_block.type for e in events if e.type == "content_block_start"]
    assert starts == ["text", "tool_use"]
    deltas = [e.delta for e in events if e.type == "content_block_delta"]
    assert [d.partial_json for d in deltas if d.type == "input_json_delta"] == [
        '{"city": ',
        '"Oslo"}',
    ]
    assert [(b.type, getattr(b, "input", None)) for b in final.content] == [
        ("text", None),
        ("tool_use", {"city": "Oslo"}),
    ]


def test_a_failure_mid_stream_is_an_error_event(farm: AnthropicFarm) -> None:
    # Nothing scripted: the model turn fails after the stream has started.
    response = farm.http.post(
        "/v1/messages", json={"model": "farm", "max_tokens": 5, "messages": USER, "stream": True}
    )
    assert response.status_code == 200
    assert "event: error" in response.text
    data = response.text.split("event: error\ndata: ")[1].split("\n")[0]
    error = json.loads(data)
    assert error["type"] == "error" and error["error"]["type"] == "api_error"
    assert "unexpected model turn" in error["error"]["message"]
    stream = farm.client.messages.stream(model="farm", max_tokens=5, messages=USER)
    with pytest.raises(anthropic.APIStatusError, match="unexpected model turn"), stream as events:
        list(events)


def test_beta_headers_and_query_are_accepted(farm: AnthropicFarm) -> None:
    farm.script.add(Step.text("beta ok"))
    reply = farm.client.beta.messages.create(
        model="farm",
        max_tokens=20,
        messages=USER,
        betas=["interleaved-thinking-2025-05-14", "mcp-client-2025-04-04"],
        extra_query={"beta": "true"},
    )
    assert reply.content[0].text == "beta ok"


# count_tokens


def test_count_tokens_counts_the_whole_request(farm: AnthropicFarm) -> None:
    count = farm.client.messages.count_tokens(
        model="farm",
        system="Be brief.",
        messages=[{"role": "user", "content": "how are you today"}],
        tools=[WEATHER],
    )
    assert count.input_tokens == 2 + 4 + 5  # the test double's words
    messages, tools = farm.relay.counted[-1]
    assert [(m.role, m.content) for m in messages] == [
        ("system", "Be brief."),
        ("user", "how are you today"),
    ]
    assert tools == ["get_weather"]


def test_count_tokens_on_a_backend_that_cannot_count_is_a_clear_400(tmp_path: Path) -> None:
    app = create_app(
        scripted_config(), home=tmp_path, provider_factory=lambda _: ScriptedProvider()
    )
    with LiveServer(app) as server:
        client = Anthropic(base_url=server.url, api_key="x", max_retries=0)
        with pytest.raises(anthropic.BadRequestError, match="cannot count tokens"):
            client.messages.count_tokens(model="farm", messages=USER)


# The MCP connector, on farmhand's server-side MCP


def test_mcp_connector_runs_tools_of_an_allowed_server(tmp_path: Path) -> None:
    server, relay = start(tmp_path, scripted_config(http_hosts=["127.0.0.1"]), keys=["k1"])
    with server:
        farm = AnthropicFarm(server, relay, key="k1")
        connector = {
            "type": "url",
            "url": f"{server.url}/mcp",
            "name": "barn",
            "authorization_token": "k1",  # the /mcp it names wants the key too
        }
        farm.script.add(
            Step.calls(ToolCall("barn:list_models", {}, "call_m")),
            Step.text("The barn has farm.", expect=sees_models),
        )
        reply = farm.client.beta.messages.create(
            model="farm",
            max_tokens=50,
            messages=USER,
            mcp_servers=[connector],
            betas=["mcp-client-2025-04-04"],
        )
        assert [b.type for b in reply.content] == ["mcp_tool_use", "mcp_tool_result", "text"]
        use, result, text = reply.content
        assert (use.id, use.name, use.server_name, use.input) == (
            "call_m",
            "list_models",
            "barn",
            {},
        )
        assert result.tool_use_id == "call_m" and result.is_error is False
        assert '"farm"' in result.content[0].text
        assert text.text == "The barn has farm."

        farm.script.add(
            Step.calls(ToolCall("barn:list_models", {}, "call_n")),
            Step.text("Streamed.", expect=sees_models),
        )
        with farm.client.beta.messages.stream(
            model="farm", max_tokens=50, messages=USER, mcp_servers=[connector]
        ) as stream:
            final = stream.get_final_message()
        assert [b.type for b in final.content] == ["mcp_tool_use", "mcp_tool_result", "text"]

        off = {**connector, "tool_configuration": {"enabled": False}}
        farm.script.add(Step.text("No tools.", expect=offers_nothing))
        farm.client.beta.messages.create(
            model="farm", max_tokens=5, messages=USER, mcp_servers=[off]
        )

        # allowed_tools: the model is offered those tools of the server and no others, and a
        # call to another one is refused, not run.
        some = {**connector, "tool_configuration": {"allowed_tools": ["list_models"]}}
        farm.script.add(
            Step.calls(ToolCall("barn:list_projects", {}, "call_p"), expect=offers_list_models),
            Step.text("Not allowed.", expect=was_refused),
        )
        farm.client.beta.messages.create(
            model="farm", max_tokens=5, messages=USER, mcp_servers=[some]
        )
    relay.script.assert_done()


def offers_list_models(_: Sequence[Message], tools: Sequence[ToolDefinition]) -> None:
    assert [t.name for t in tools] == ["barn:list_models"]


def was_refused(messages: Sequence[Message], _: Sequence[ToolDefinition]) -> None:
    assert messages[-1].role == "tool" and "list_projects" in messages[-1].content
    assert '"projects"' not in messages[-1].content  # the tool never ran


def sees_models(messages: Sequence[Message], _: Sequence[ToolDefinition]) -> None:
    assert messages[-1].role == "tool" and '"farm"' in messages[-1].content


def offers_nothing(_: Sequence[Message], tools: Sequence[ToolDefinition]) -> None:
    assert list(tools) == []


def test_mcp_connector_to_a_host_not_allowed_is_403(farm: AnthropicFarm) -> None:
    connector = {"type": "url", "url": f"{farm.server.url}/mcp", "name": "barn"}
    with pytest.raises(anthropic.PermissionDeniedError, match=r"127\.0\.0\.1") as raised:
        farm.client.beta.messages.create(
            model="farm", max_tokens=5, messages=USER, mcp_servers=[connector]
        )
    assert raised.value.body["error"]["type"] == "permission_error"


# Models and keys


def test_models_list_in_anthropic_shape(farm: AnthropicFarm) -> None:
    page = farm.client.models.list()
    assert [(m.id, m.type, m.display_name) for m in page.data] == [("farm", "model", "farm")]
    assert page.has_more is False
    assert farm.client.models.retrieve("farm").id == "farm"


def test_x_api_key_is_checked(tmp_path: Path) -> None:
    server, relay = start(tmp_path, keys=["sekrit"])
    with server:
        relay.script.add(Step.text("Welcome."))
        assert AnthropicFarm(server, relay, key="sekrit").ask().content[0].text == "Welcome."
        with pytest.raises(anthropic.AuthenticationError, match="x-api-key") as raised:
            AnthropicFarm(server, relay, key="guess").ask()
        message = raised.value.body["error"]["message"]
        error = {"type": "authentication_error", "message": message}
        assert raised.value.body == {"type": "error", "error": error}
    relay.script.assert_done()


# Client mistakes: 4xx in Anthropic's shape


def assert_anthropic_error(response: httpx.Response, status: int, kind: str, *words: str) -> None:
    assert response.status_code == status, response.text
    body = response.json()
    assert body["type"] == "error" and set(body["error"]) == {"type", "message"}
    assert body["error"]["type"] == kind
    for word in words:
        assert word in body["error"]["message"], body["error"]["message"]


def body(**fields: Any) -> dict[str, Any]:
    return {"model": "farm", "max_tokens": 10, "messages": USER, **fields}


def user(content: Any) -> dict[str, Any]:
    return body(messages=[{"role": "user", "content": content}])


URL_SERVER = {"type": "url", "url": "http://h/mcp", "name": "h"}
IMAGE = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "x"}}


@pytest.mark.parametrize(
    ("sent", "words"),
    [
        ({"model": "farm", "messages": USER}, ["max_tokens is required"]),
        (body(max_tokens=0), ["max_tokens", "at least 1"]),
        (body(model=""), ["`model` is required"]),
        (body(messages=[]), ["non-empty"]),
        (body(messages=[{"role": "wizard", "content": "x"}]), ["wizard"]),
        (user([IMAGE]), ["image block", "text only"]),
        (user([{"type": "tool_result"}]), ["tool_use_id"]),
        (user([{"type": "text", "text": 5}]), ["text block"]),
        (user(7), ["string or a list"]),
        (body(system=[{"type": "image"}]), ["image"]),
        (body(tools=[{"name": "x"}]), ["input_schema"]),
        (body(tool_choice="auto"), ["must be an object"]),
        (body(tool_choice={"type": "sometimes"}), ["sometimes"]),
        (body(tool_choice={"type": "any"}), ["needs `tools`"]),
        (body(temperature=1.5), ["between 0 and 1"]),
        (body(top_k=-1), ["top_k"]),
        (body(stop_sequences="END"), ["stop_sequences"]),
        (body(stream="yes"), ["true or false"]),
        (body(mcp_servers=[{"type": "url", "name": "x"}]), ["URL"]),
        (body(mcp_servers=[{"type": "stdio", "command": "sh"}]), ["type"]),
        (
            body(mcp_servers=[{**URL_SERVER, "tool_configuration": {"allowed_tools": "a"}}]),
            ["allowed_tools", "list of tool names"],
        ),
    ],
)  # fmt: skip
def test_bad_requests_are_400_in_anthropic_shape(
    farm: AnthropicFarm, sent: dict[str, Any], words: list[str]
) -> None:
    response = farm.http.post("/v1/messages", json=sent)
    assert_anthropic_error(response, 400, "invalid_request_error", *words)


def test_bad_json_unknown_model_and_routes_in_anthropic_shape(farm: AnthropicFarm) -> None:
    raw = farm.http.post(
        "/v1/messages", content=b"{oops", headers={"content-type": "application/json"}
    )
    assert_anthropic_error(raw, 400, "invalid_request_error", "not valid JSON")
    assert_anthropic_error(
        farm.http.post("/v1/messages", json=body(model="claude-9")), 404, "not_found_error", "farm"
    )
    streamed = farm.http.post("/v1/messages", json=body(model="claude-9", stream=True))
    assert_anthropic_error(streamed, 404, "not_found_error")
    assert_anthropic_error(farm.http.get("/v1/messages"), 405, "invalid_request_error", "GET")
    assert_anthropic_error(farm.http.post("/v1/messages/batches", json={}), 404, "not_found_error")
    with pytest.raises(anthropic.NotFoundError):
        farm.client.messages.create(model="claude-9", max_tokens=5, messages=USER)


def test_an_earlier_mcp_reply_sent_back_is_history() -> None:
    from farmhand.dialects.anthropic.request import parse_messages

    use = {"type": "mcp_tool_use", "id": "c1", "name": "list_models", "server_name": "barn"}
    result = {"type": "mcp_tool_result", "tool_use_id": "c1", "is_error": False, "content": "[]"}
    assistant = [
        {"type": "redacted_thinking", "data": "opaque"},
        {**use, "input": {}},
        result,
        {"type": "text", "text": "None."},
    ]
    parsed = parse_messages(
        body(messages=[*USER, {"role": "assistant", "content": assistant}, *USER])
    )
    history = [(m.role, m.content, m.tool_call_id) for m in parsed.chat.messages]
    assert history == [
        ("user", "hello", None),
        ("assistant", "", None),
        ("tool", "[]", "c1"),
        ("assistant", "None.", None),
        ("user", "hello", None),
    ]
    assert parsed.chat.messages[1].tool_calls == (ToolCall("barn:list_models", {}, "c1"),)
    assert parsed.chat.messages[2].name == "barn:list_models"
