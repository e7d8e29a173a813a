"""The OpenAI dialect with the real `openai` SDK against a real uvicorn: scripted model turns,
real MCP servers (the pantry stdio server) for the tools farmhand runs itself."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
from openai import OpenAI
from tests.support.farms import Farm, Relay, start
from tests.support.live import PANTRY_SERVER, LiveServer, pantry_server, scripted_config

from farmhand.assembly import create_app
from farmhand.messages import Message, ToolCall, Usage
from farmhand.providers.scripted import ScriptedProvider, Step
from farmhand.tools.choice import ToolChoice
from farmhand.tools.definition import ToolDefinition

WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "The weather in a city.",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
    },
}


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LiveServer, Relay]]:
    """One server for the module (the pantry MCP server stays connected in its pool);
    conftest's `farm` plays each test's script on it."""
    server, relay = start(tmp_path_factory.mktemp("home"), scripted_config(pantry_server()))
    with server:
        yield server, relay


def ask(farm: Farm, text: str = "hello", **extra: Any) -> Any:
    return farm.client.chat.completions.create(
        model="farm", messages=[{"role": "user", "content": text}], **extra
    )


# Plain chat


def test_plain_chat_returns_a_chat_completion(farm: Farm) -> None:
    farm.script.add(Step.text("Hello from the farm.", usage=Usage(12, 5)))
    reply = ask(farm, temperature=0.2, max_tokens=50, seed=3, stop=["END"])
    assert reply.object == "chat.completion"
    assert reply.model == "farm"
    assert reply.id.startswith("chatcmpl-")
    choice = reply.choices[0]
    assert choice.message.role == "assistant"
    assert choice.message.content == "Hello from the farm."
    assert choice.finish_reason == "stop"
    assert choice.message.tool_calls is None
    assert (reply.usage.prompt_tokens, reply.usage.completion_tokens) == (12, 5)
    assert reply.usage.total_tokens == 17
    settings = farm.script.requests[0].settings
    assert (settings.temperature, settings.max_tokens, settings.seed) == (0.2, 50, 3)
    assert settings.stop == ("END",)


def test_messages_of_every_role_and_text_parts_reach_the_model(farm: Farm) -> None:
    def sees(messages: Sequence[Message], _: Sequence[ToolDefinition]) -> None:
        assert [(m.role, m.content) for m in messages] == [
            ("system", "Be brief."),
            ("user", "Hi there"),
            ("assistant", "Hello."),
            ("user", "Again?"),
        ]

    farm.script.add(Step.text("Yes.", expect=sees))
    reply = farm.client.chat.completions.create(
        model="farm",
        messages=[
            {"role": "system", "content": "Be brief."},
            {
                "role": "user",
                "content": [{"type": "text", "text": "Hi "}, {"type": "text", "text": "there"}],
            },
            {"role": "assistant", "content": "Hello."},
            {"role": "user", "content": "Again?"},
        ],
    )
    assert reply.choices[0].message.content == "Yes."


def test_length_finish_reason(farm: Farm) -> None:
    from farmhand.messages import Finish, TextDelta

    farm.script.add([TextDelta("cut sh"), Finish("length")])
    reply = ask(farm, max_completion_tokens=2)
    assert reply.choices[0].finish_reason == "length"
    assert farm.script.requests[0].settings.max_tokens == 2


def test_models_are_listed_in_openai_shape(tmp_path: Path) -> None:
    server, _ = start(tmp_path, scripted_config(models=("farm", "barn")))
    with server:
        client = OpenAI(base_url=f"{server.url}/v1", api_key="x", max_retries=0)
        models = client.models.list()
        assert [m.id for m in models.data] == ["farm", "barn"]
        assert all(m.object == "model" and m.owned_by == "farmhand" for m in models.data)
        assert client.models.retrieve("barn").id == "barn"
        with pytest.raises(openai.NotFoundError):
            client.models.retrieve("silo")


# Streaming


def test_streaming_sends_text_deltas_then_finish_and_usage(farm: Farm) -> None:
    farm.script.add(Step.text("one two three", usage=Usage(4, 3)))
    stream = ask(farm, stream=True, stream_options={"include_usage": True})
    chunks = list(stream)
    assert all(c.object == "chat.completion.chunk" for c in chunks)
    assert len({c.id for c in chunks}) == 1
    assert chunks[0].choices[0].delta.role == "assistant"
    texts = [c.choices[0].delta.content for c in chunks if c.choices and c.choices[0].delta.content]
    assert texts == ["one ", "two ", "three"]
    finishes = [c.choices[0].finish_reason for c in chunks if c.choices]
    assert finishes[-1] == "stop"
    assert finishes[:-1] == [None] * (len(finishes) - 1)
    assert chunks[-1].choices == []
    assert chunks[-1].usage is not None and chunks[-1].usage.total_tokens == 7


def test_a_backend_failure_mid_stream_is_an_error_event(farm: Farm) -> None:
    # No step scripted: the model turn fails after the stream has started.
    stream = ask(farm, stream=True)
    with pytest.raises(openai.APIError, match="unexpected model turn"):
        list(stream)


# Client tools


def test_client_tool_calls_come_back_as_openai_returns_them(farm: Farm) -> None:
    def offered(_: Sequence[Message], tools: Sequence[ToolDefinition]) -> None:
        assert "get_weather" in [t.name for t in tools]

    farm.script.add(
        Step.calls(ToolCall("get_weather", {"city": "Oslo"}, id="call_w1"), expect=offered)
    )
    reply = ask(farm, "Weather in Oslo?", tools=[WEATHER_TOOL], tool_choice="auto")
    choice = reply.choices[0]
    assert choice.finish_reason == "tool_calls"
    assert choice.message.content is None
    (call,) = choice.message.tool_calls
    assert (call.id, call.type, call.function.name) == ("call_w1", "function", "get_weather")
    assert json.loads(call.function.arguments) == {"city": "Oslo"}

    def sees_result(messages: Sequence[Message], _: Sequence[ToolDefinition]) -> None:
        assert messages[-2].tool_calls[0].id == "call_w1"
        assert messages[-1].role == "tool"
        assert (messages[-1].tool_call_id, messages[-1].name) == ("call_w1", "get_weather")
        assert messages[-1].content == "Sunny, 21 C"

    farm.script.add(Step.text("It is sunny in Oslo.", expect=sees_result))
    follow_up = farm.client.chat.completions.create(
        model="farm",
        messages=[
            {"role": "user", "content": "Weather in Oslo?"},
            choice.message.model_dump(exclude_none=True),
            {"role": "tool", "tool_call_id": "call_w1", "content": "Sunny, 21 C"},
        ],
        tools=[WEATHER_TOOL],
    )
    assert follow_up.choices[0].message.content == "It is sunny in Oslo."
    assert follow_up.choices[0].finish_reason == "stop"


def test_client_tool_calls_stream_as_openai_streams_them(farm: Farm) -> None:
    farm.script.add(
        Step.calls(
            ToolCall("get_weather", {"city": "Oslo"}, id="call_a"),
            ToolCall("get_weather", {"city": "Bergen"}, id="call_b"),
            text="Checking.",
        )
    )
    chunks = list(ask(farm, tools=[WEATHER_TOOL], stream=True))
    deltas = [c.choices[0].delta.tool_calls for c in chunks if c.choices[0].delta.tool_calls]
    calls = [call for delta in deltas for call in delta]
    assert [(c.index, c.id, c.type, c.function.name) for c in calls] == [
        (0, "call_a", "function", "get_weather"),
        (1, "call_b", "function", "get_weather"),
    ]
    assert [json.loads(c.function.arguments) for c in calls] == [
        {"city": "Oslo"},
        {"city": "Bergen"},
    ]
    assert chunks[-1].choices[0].finish_reason == "tool_calls"


def test_tool_choice_and_parallel_tool_calls_reach_the_model(farm: Farm) -> None:
    farm.script.add(Step.calls(ToolCall("get_weather", {"city": "Oslo"})))
    reply = ask(
        farm,
        tools=[WEATHER_TOOL],
        tool_choice={"type": "function", "function": {"name": "get_weather"}},
        parallel_tool_calls=False,
        top_p=0.7,
    )
    assert reply.choices[0].finish_reason == "tool_calls"
    settings = farm.script.requests[0].settings
    assert settings.top_p == 0.7
    assert settings.tool_choice == ToolChoice.tool("get_weather")
    assert settings.parallel_tool_calls is False


# Tools farmhand runs itself


def sees_tool_result(text: str) -> Any:
    def check(messages: Sequence[Message], _: Sequence[ToolDefinition]) -> None:
        assert messages[-1].role == "tool"
        assert messages[-1].content == text

    return check


def test_server_side_mcp_tools_run_and_include_tool_results(farm: Farm) -> None:
    farm.script.add(
        Step.calls(ToolCall("pantry:echo", {"text": "twelve eggs"}, id="call_e")),
        Step.text("You have twelve eggs.", expect=sees_tool_result("twelve eggs")),
    )
    reply = ask(farm, "What is in the pantry?", extra_body={"include_tool_results": True})
    assert reply.choices[0].message.content == "You have twelve eggs."
    assert reply.choices[0].finish_reason == "stop"
    assert reply.choices[0].message.tool_calls is None  # farmhand ran them; not the client's
    assert reply.model_extra["tool_results"] == [
        {
            "tool_call_id": "call_e",
            "name": "pantry:echo",
            "arguments": {"text": "twelve eggs"},
            "content": "twelve eggs",
            "is_error": False,
        }
    ]


def test_tool_results_are_left_out_unless_asked_for(farm: Farm) -> None:
    farm.script.add(
        Step.calls(ToolCall("pantry:echo", {"text": "x"})),
        Step.text("Done."),
    )
    reply = ask(farm)
    assert "tool_results" not in (reply.model_extra or {})


def test_server_side_tool_calls_stream_as_they_happen(farm: Farm) -> None:
    farm.script.add(
        Step.calls(ToolCall("pantry:echo", {"text": "flour"}, id="call_f"), text="Looking. "),
        Step.text("Flour it is."),
    )
    chunks = list(ask(farm, stream=True, extra_body={"include_tool_results": True}))
    events = [c.model_extra["farmhand"] for c in chunks if c.model_extra.get("farmhand")]
    assert events[0] == {
        "type": "tool_call",
        "id": "call_f",
        "name": "pantry:echo",
        "arguments": {"text": "flour"},
    }
    assert events[1] == {
        "type": "tool_result",
        "tool_call_id": "call_f",
        "name": "pantry:echo",
        "content": "flour",
        "is_error": False,
    }
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == "Looking. Flour it is."
    # The tool events come between the two turns' text.
    order = [
        "tool" if c.model_extra.get("farmhand", {}).get("type") else c.choices[0].delta.content
        for c in chunks
        if c.choices
        and (c.choices[0].delta.content or c.model_extra.get("farmhand", {}).get("type"))
    ]
    assert order.index("tool") > order.index("Looking. ")
    assert chunks[-1].choices[0].finish_reason == "stop"
    assert chunks[-1].model_extra["tool_results"][0]["content"] == "flour"


def test_request_mcp_servers_start_under_the_request_rules(tmp_path: Path) -> None:
    server, relay = start(tmp_path, scripted_config(request_dirs=[tmp_path]))
    with server:
        farm = Farm(server, relay.script)
        farm.script.add(
            Step.calls(ToolCall("kitchen:echo", {"text": "from the request"})),
            Step.text("ok", expect=sees_tool_result("from the request")),
        )
        inline = {"name": "kitchen", "command": sys.executable, "args": [str(PANTRY_SERVER)]}
        reply = ask(farm, extra_body={"mcp_servers": [inline], "max_tool_rounds": 2})
        assert reply.choices[0].message.content == "ok"

        with pytest.raises(openai.PermissionDeniedError, match="not a launcher"):
            ask(
                farm,
                extra_body={
                    "mcp_servers": [{"name": "sh", "command": "bash", "args": ["-c", "id"]}]
                },
            )
        with pytest.raises(openai.BadRequestError, match="config file") as refused:
            unsafe = {**inline, "allow_unsafe_command": True}
            ask(farm, extra_body={"mcp_servers": [unsafe]})
        assert refused.value.param == "mcp_servers"
        with pytest.raises(openai.PermissionDeniedError, match="metacharacters"):
            ask(farm, extra_body={"mcp_servers": [{**inline, "args": ["x; rm -rf /"]}]})
        with pytest.raises(openai.BadRequestError, match="transport"):
            ask(farm, extra_body={"mcp_servers": [{**inline, "transport": "carrier-pigeon"}]})
    relay.script.assert_done()


def test_extensions_reach_the_loop(farm: Farm) -> None:
    farm.script.add(
        Step.calls(ToolCall("pantry:echo", {"text": "1"})),
        Step.calls(ToolCall("pantry:echo", {"text": "2"})),  # over the limit: answer instead
        Step.text("Enough."),
    )
    reply = ask(farm, extra_body={"max_tool_rounds": 1, "tool_timeout": 5000})
    assert reply.choices[0].message.content == "Enough."
    assert reply.model_extra["farmhand"]["stop_reason"] == "round_limit"


# Errors: 4xx in OpenAI's shape, the right SDK exception


def assert_openai_error(response: httpx.Response, status: int, *words: str) -> dict[str, Any]:
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert set(error) == {"message", "type", "param", "code"}
    for word in words:
        assert word in error["message"], error["message"]
    return error


def test_bad_json_is_400(farm: Farm) -> None:
    response = farm.http.post(
        "/v1/chat/completions", content=b"{not json", headers={"content-type": "application/json"}
    )
    assert_openai_error(response, 400, "not valid JSON")
    assert_openai_error(farm.http.post("/v1/chat/completions", json=[1]), 400, "JSON object")


def chat_body(**fields: Any) -> dict[str, Any]:
    return {"model": "farm", "messages": [{"role": "user", "content": "x"}], **fields}


def one_message(message: dict[str, Any]) -> dict[str, Any]:
    return chat_body(messages=[message])


IMAGE = {"type": "image_url", "image_url": {"url": "http://x/cat.png"}}
NAMELESS_TOOL = {"type": "function", "function": {"description": "no name"}}


@pytest.mark.parametrize(
    ("body", "param", "words"),
    [
        ({"model": "farm"}, "messages", ["`messages` is required"]),
        ({"messages": [{"role": "user", "content": "x"}]}, "model", ["`model` is required"]),
        (chat_body(messages=[]), "messages", ["non-empty"]),
        (one_message({"role": "wizard", "content": "x"}), "messages[0].role", ["wizard"]),
        (one_message({"role": "tool", "content": "x"}), "messages[0].tool_call_id", ["without"]),
        (one_message({"role": "user", "content": [IMAGE]}), "messages[0].content", ["text parts"]),
        (chat_body(tools=[NAMELESS_TOOL]), "tools", ["name"]),
        (chat_body(tools="all"), "tools", ["list"]),
        (chat_body(tool_choice="sometimes"), "tool_choice", ["sometimes"]),
        (chat_body(tool_choice="required"), "tool_choice", ["needs `tools`"]),
        (chat_body(temperature="hot"), "temperature", ["number"]),
        (chat_body(max_tokens=0), "max_tokens", ["at least 1"]),
        (chat_body(stream="yes"), "stream", ["true or false"]),
        (chat_body(mcp_servers={"a": 1}), "mcp_servers", ["list"]),
        (chat_body(mcp_servers=[{"command": "x"}]), "mcp_servers", ["name"]),
    ],
)  # fmt: skip
def test_bad_requests_are_400_and_name_the_field(
    farm: Farm, body: dict[str, Any], param: str, words: list[str]
) -> None:
    error = assert_openai_error(farm.http.post("/v1/chat/completions", json=body), 400, *words)
    assert error["param"] == param
    assert error["type"] == "invalid_request_error"


def test_sdk_raises_bad_request_for_unknown_tool_choice_name(farm: Farm) -> None:
    with pytest.raises(openai.BadRequestError, match="get_weather") as raised:
        ask(
            farm,
            tools=[WEATHER_TOOL],
            tool_choice={"type": "function", "function": {"name": "get_wether"}},
        )
    assert raised.value.status_code == 400
    assert raised.value.param == "tool_choice"
    with pytest.raises(openai.BadRequestError):  # also when streaming: before the stream
        ask(farm, stream=True, tool_choice={"type": "function", "function": {"name": "nope"}})


def test_unknown_model_is_404_and_lists_the_models(farm: Farm) -> None:
    with pytest.raises(openai.NotFoundError, match="available models: farm") as raised:
        farm.client.chat.completions.create(
            model="gpt-9", messages=[{"role": "user", "content": "x"}]
        )
    assert raised.value.code == "model_not_found"
    with pytest.raises(openai.NotFoundError):
        farm.client.chat.completions.create(
            model="gpt-9", messages=[{"role": "user", "content": "x"}], stream=True
        )


def test_unknown_endpoint_and_method_are_openai_shaped(farm: Farm) -> None:
    assert_openai_error(farm.http.get("/v1/nothing"), 404, "/v1/nothing")
    assert_openai_error(farm.http.get("/v1/chat/completions"), 405, "GET")


def test_too_large_requests_are_413(tmp_path: Path) -> None:
    server, _ = start(tmp_path, max_body_bytes=1000)
    with server:
        farm = Farm(server, ScriptedProvider())
        big = "x" * 2000
        assert_openai_error(
            farm.http.post("/v1/chat/completions", json={"model": "farm", "messages": [big]}),
            413,
            "1000 bytes",
        )
        with pytest.raises(openai.APIStatusError) as raised:
            ask(farm, big)
        assert raised.value.status_code == 413

        def chunks() -> Iterator[bytes]:  # no Content-Length: counted as it arrives
            yield b'{"model": "farm", "messages": ["'
            yield b"x" * 2000
            yield b'"]}'

        response = farm.http.post(
            "/v1/chat/completions", content=chunks(), headers={"content-type": "application/json"}
        )
        assert_openai_error(response, 413)


# API keys


def test_api_keys_are_required_when_set(tmp_path: Path) -> None:
    server, relay = start(tmp_path, scripted_config(), keys=["sekrit", "other"])
    provider = relay.script
    with server:
        farm = Farm(server, provider, key="sekrit")
        provider.add(Step.text("Welcome."))
        assert ask(farm).choices[0].message.content == "Welcome."
        models = OpenAI(base_url=f"{server.url}/v1", api_key="other", max_retries=0).models.list()
        assert [m.id for m in models.data] == ["farm"]

        intruder = OpenAI(base_url=f"{server.url}/v1", api_key="guess", max_retries=0)
        with pytest.raises(openai.AuthenticationError, match="API key"):
            intruder.chat.completions.create(
                model="farm", messages=[{"role": "user", "content": "x"}]
            )
        with pytest.raises(openai.AuthenticationError):
            intruder.models.list()
        response = farm.http.get("/v1/models")  # no Authorization header at all
        assert_openai_error(response, 401, "Bearer")
        assert response.headers["www-authenticate"] == "Bearer"
        assert farm.http.get("/health").status_code == 200  # liveness stays open
    provider.assert_done()


def test_api_keys_from_the_config_are_required_too(tmp_path: Path) -> None:
    config = scripted_config()
    config.server.api_keys = ["from-config"]
    relay = Relay()
    app = create_app(config, home=tmp_path, provider_factory=lambda _: relay)
    with LiveServer(app) as server:
        relay.script.add(Step.text("Hi."))
        farm = Farm(server, relay.script, key="from-config")
        assert ask(farm).choices[0].message.content == "Hi."
        assert_openai_error(farm.http.get("/v1/models"), 401, "Bearer")
