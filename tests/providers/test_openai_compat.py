"""OpenAICompatProvider against recorded server streams (a loopback server that sends them in
small pieces, so lines and UTF-8 characters split the way a network splits them) and against
scripted sockets for the transport failures (refused, timeouts, connection cut)."""

from __future__ import annotations

import json
import socket
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from anyio.abc import ByteStream, SocketAttribute
from tests.providers.fake_backend import Server
from tests.support.generators import left_to_asyncio

from farmhand.errors import ProviderError
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
from farmhand.providers.base import GenerationSettings, Provider
from farmhand.providers.openai_compat import OpenAICompatProvider
from farmhand.tools.choice import ToolChoice
from farmhand.tools.definition import ToolDefinition

pytestmark = pytest.mark.anyio

DATA = Path(__file__).parent / "data"
WEATHER = ToolDefinition(
    "weather:get_current",
    "Current weather for a place.",
    {"type": "object", "properties": {"location": {"type": "string"}}, "required": ["location"]},
)
READ_FILE = ToolDefinition("filesystem:read_file", "Read a file.")
ASK = [Message.user("What is the weather in Paris?")]
DEFAULTS = GenerationSettings()


def recording(name: str) -> bytes:
    return (DATA / name).read_bytes()


def sse(*chunks: dict[str, Any] | str) -> bytes:
    """An SSE body from chunk objects (or raw data strings), ended by [DONE]."""
    lines = [c if isinstance(c, str) else json.dumps(c) for c in chunks]
    return "".join(f"data: {line}\n\n" for line in [*lines, "[DONE]"]).encode()


def delta(finish: str | None = None, **fields: Any) -> dict[str, Any]:
    return {"choices": [{"index": 0, "delta": fields, "finish_reason": finish}]}


def call_fragment(index: int, arguments: str, id: str = "", name: str = "") -> dict[str, Any]:
    fragment: dict[str, Any] = {"index": index, "function": {"arguments": arguments}}
    if id:
        fragment.update(id=id, type="function")
        fragment["function"]["name"] = name
    return delta(tool_calls=[fragment])


async def run(
    provider: OpenAICompatProvider,
    messages: Sequence[Message] = ASK,
    tools: Sequence[ToolDefinition] = (WEATHER,),
    settings: GenerationSettings = DEFAULTS,
) -> list[StreamEvent]:
    """One turn's events; the provider's connections are closed after it (it reopens them
    if used again)."""
    try:
        return [event async for event in provider.stream(messages, tools, settings)]
    finally:
        await provider.aclose()


async def fails(provider: OpenAICompatProvider, *tools: ToolDefinition) -> str:
    with pytest.raises(ProviderError) as caught:
        await run(provider, tools=tools)
    return str(caught.value)


def text_of(events: list[StreamEvent], kind: type[TextDelta | ReasoningDelta]) -> str:
    return "".join(e.text for e in events if isinstance(e, kind))


def calls_of(events: list[StreamEvent]) -> list[ToolCall]:
    return [e.call for e in events if isinstance(e, ToolCallEvent)]


# --- recorded streams -------------------------------------------------------------------


@pytest.mark.parametrize("split", [1, 7, 100_000])
async def test_openai_text_stream(split: int) -> None:
    events = await run(Server(recording("openai_text.sse"), split=split).provider())
    assert all(isinstance(e, TextDelta) for e in events[:-1])
    assert text_of(events, TextDelta) == "Bonjour! The café opens at 8 — see you there."
    assert events[-1] == Finish("stop", Usage(24, 13))


async def test_openai_tool_call_split_across_chunks_maps_the_name_back() -> None:
    events = await run(Server(recording("openai_tool_call.sse")).provider())
    assert events == [
        ToolCallEvent(
            ToolCall(
                "weather:get_current",
                {"location": "Paris, France", "unit": "celsius"},
                id="call_3xrN4wnyCdGSBRpGHUJEtQLb",
            )
        ),
        Finish("tool_calls", Usage(88, 24)),
    ]


async def test_openai_parallel_calls_come_out_in_index_order() -> None:
    events = await run(Server(recording("openai_parallel_calls.sse")).provider())
    assert [(c.id, c.name, c.arguments) for c in calls_of(events)] == [
        ("call_kVbxVRIbTP5yfNnDn9oGeqcI", "weather:get_current", {"location": "Paris"}),
        ("call_Wr1nTgNVCxDqkcM5CXlKsc3Z", "weather:get_current", {"location": "Tokyo"}),
    ]
    assert events[-1] == Finish("tool_calls", Usage(88, 46))


async def test_llama_server_reasoning_then_tool_call_then_usage_chunk() -> None:
    server = Server(recording("llama_server_reasoning_tool_call.sse"), split=5)
    events = await run(server.provider(), tools=[READ_FILE])
    reasoning = "Okay, the user wants the notes file. I should call read_file."
    assert text_of(events, ReasoningDelta) == reasoning
    kinds = [type(e).__name__ for e in events]
    assert kinds == ["ReasoningDelta"] * 15 + ["ToolCallEvent", "Finish"]
    [call] = calls_of(events)
    assert (call.name, call.arguments) == ("filesystem:read_file", {"path": "notes/été.txt"})
    assert call.id == "ZkqbW3Ar5Cc0hE9uWJ2gnYtxsPd8mOvL"
    assert events[-1] == Finish("tool_calls", Usage(312, 41))


async def test_ollama_whole_call_in_one_chunk_finished_as_stop() -> None:
    events = await run(Server(recording("ollama_tool_call.sse")).provider())
    [call] = calls_of(events)
    assert (call.id, call.name) == ("call_l0nq9mz3", "weather:get_current")
    assert call.arguments == {"location": "Lyon", "unit": "celsius"}
    # Ollama said "stop", but a turn that called tools finished with tool_calls.
    assert events[-1] == Finish("tool_calls", Usage(196, 27))


# --- the request ------------------------------------------------------------------------


async def test_request_body_converts_history_tools_and_settings() -> None:
    server = Server(recording("openai_text.sse"))
    provider = server.provider(api_key="sk-test", extra_params={"top_k": 20, "temperature": 1})
    call = ToolCall("weather:get_current", {"location": "Paris"}, id="call_1")
    history = [
        Message.system("Be brief."),
        Message.user("Weather in Paris?"),
        Message.assistant("Checking.", tool_calls=(call,)),
        Message.tool(ToolResult("call_1", "weather:get_current", "18°C")),
        Message.assistant(tool_calls=(ToolCall("old:tool", {}, id="call_2"),)),
    ]
    settings = GenerationSettings(
        temperature=0.2,
        max_tokens=64,
        seed=7,
        stop=("END",),
        tool_choice=ToolChoice.tool("weather:get_current"),
        parallel_tool_calls=False,
    )
    await run(provider, history, [WEATHER, READ_FILE], settings)

    request = server.requests[0]
    assert (request.method, request.path) == ("POST", "/v1/chat/completions")
    assert request.headers["authorization"] == "Bearer sk-test"
    assert server.sent == {
        "model": "test-model",
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Weather in Paris?"},
            {
                "role": "assistant",
                "content": "Checking.",
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {
                            "name": "weather__get_current",
                            "arguments": '{"location": "Paris"}',
                        },
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "call_1", "content": "18°C"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_2",
                        "type": "function",
                        "function": {"name": "old__tool", "arguments": "{}"},
                    }
                ],
            },
        ],
        "stream": True,
        "stream_options": {"include_usage": True},
        "tools": [
            {
                "type": "function",
                "function": {
                    "name": "weather__get_current",
                    "description": WEATHER.description,
                    "parameters": WEATHER.parameters,
                },
            },
            {
                "type": "function",
                "function": {
                    "name": "filesystem__read_file",
                    "description": "Read a file.",
                    "parameters": {"type": "object", "properties": {}},
                },
            },
        ],
        "tool_choice": {"type": "function", "function": {"name": "weather__get_current"}},
        "parallel_tool_calls": False,
        "temperature": 0.2,  # the turn's setting beats extra_params
        "top_k": 20,
        "max_tokens": 64,
        "seed": 7,
        "stop": ["END"],
    }


async def test_without_tools_no_tool_fields_and_no_unset_settings() -> None:
    server = Server(recording("openai_text.sse"))
    await run(server.provider(), tools=[])
    assert set(server.sent) == {"model", "messages", "stream", "stream_options"}
    assert "authorization" not in server.requests[0].headers


@pytest.mark.parametrize("choice", ["auto", "none", "required"])
async def test_string_tool_choice_is_sent_as_is(choice: str) -> None:
    server = Server(recording("openai_text.sse"))
    await run(server.provider(), settings=GenerationSettings(tool_choice=ToolChoice(choice)))  # type: ignore[arg-type]
    assert server.sent["tool_choice"] == choice
    assert server.sent["parallel_tool_calls"] is True


# --- stream details ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ('{"location": "Par', "are not valid JSON"),
        ('["Paris"]', "must be a JSON object, not an array"),
        ('"Paris"', "must be a JSON object, not a string"),
    ],
)
async def test_bad_arguments_become_a_parse_error(arguments: str, expected: str) -> None:
    body = sse(call_fragment(0, arguments, id="call_9", name="weather__get_current"))
    [call] = calls_of(await run(Server(body).provider()))
    assert (call.id, call.name, call.arguments) == ("call_9", "weather:get_current", {})
    assert call.parse_error is not None
    assert expected in call.parse_error
    assert arguments in call.parse_error  # shows the model what it wrote


async def test_empty_arguments_mean_no_arguments() -> None:
    body = sse(call_fragment(0, "", id="call_1", name="weather__get_current"))
    [call] = calls_of(await run(Server(body).provider()))
    assert (call.arguments, call.parse_error) == ({}, None)


async def test_unknown_names_pass_through_and_a_missing_id_is_generated() -> None:
    body = sse(delta(tool_calls=[{"function": {"name": "made_up", "arguments": "{}"}}]))
    [call] = calls_of(await run(Server(body).provider()))
    assert call.name == "made_up"
    assert call.id.startswith("call_")


async def test_reasoning_field_comments_and_finish_reasons() -> None:
    body = b": keep-alive\n\nevent: message\n" + sse(
        delta(reasoning="Hmm."), delta(content="Hi"), delta("length")
    )
    events = await run(Server(body).provider())
    assert events == [ReasoningDelta("Hmm."), TextDelta("Hi"), Finish("length")]


async def test_calls_are_emitted_when_finish_reason_arrives() -> None:
    body = sse(
        call_fragment(0, '{"location": "Oslo"}', id="call_1", name="weather__get_current"),
        delta("tool_calls"),
        delta(content=" trailing"),
    )
    events = await run(Server(body).provider())
    assert [type(e) for e in events] == [ToolCallEvent, TextDelta, Finish]


async def test_a_stream_cut_before_done_still_finishes() -> None:
    body = sse(delta(content="Hi"))[: -len(b"data: [DONE]\n\n")]
    assert await run(Server(body).provider()) == [TextDelta("Hi"), Finish("stop")]


async def test_vllms_stop_reason_names_the_stop_string_that_ended_the_turn() -> None:
    def ended(stop_reason: object) -> bytes:
        last = {"index": 0, "delta": {}, "finish_reason": "stop", "stop_reason": stop_reason}
        return sse(delta(content="1, 2, 3, 4"), {"choices": [last]})

    asked = GenerationSettings(stop=(", 5,", "\n\n"))
    finish = (await run(Server(ended(", 5,")).provider(), tools=[], settings=asked))[-1]
    assert finish == Finish("stop", stop_sequence=", 5,")
    for other in (None, 151645, "not one we sent"):  # EOS, a stop token id, a stranger
        finish = (await run(Server(ended(other)).provider(), tools=[], settings=asked))[-1]
        assert finish == Finish("stop")


async def test_a_server_that_ignores_stream_true_is_understood() -> None:
    completion = {
        "choices": [{"index": 0, "finish_reason": "stop", "message": {"content": "Whole."}}],
        "usage": {"prompt_tokens": 3, "completion_tokens": 2},
    }
    server = Server(json.dumps(completion).encode(), kind="application/json")
    assert await run(server.provider()) == [TextDelta("Whole."), Finish("stop", Usage(3, 2))]


async def test_stopping_early_closes_the_response() -> None:
    server = Server(recording("openai_text.sse"), hold=True)
    provider = server.provider()
    stream = provider.stream(ASK, [], GenerationSettings())
    assert isinstance(await anext(stream), TextDelta)
    await stream.aclose()  # type: ignore[attr-defined]
    assert await anyio.to_thread.run_sync(server.closed.wait, 10)
    await provider.aclose()


async def test_done_ends_the_reading_and_closes_its_line_reader() -> None:
    # What follows [DONE] is drained, not parsed; the line reader is closed by the provider,
    # not left for asyncio to close with a task of its own on every streamed turn.
    server = Server(sse(delta(content="Hi.")) + b": after the end\n\n")
    with left_to_asyncio() as left:
        events = await run(server.provider())
    assert events == [TextDelta("Hi."), Finish("stop", Usage())]
    assert left == []


# --- errors from the server -------------------------------------------------------------


def error_body(**body: Any) -> bytes:
    return json.dumps(body).encode()


@pytest.mark.parametrize(
    ("status", "body", "expected"),
    [
        (
            401,
            error_body(error={"message": "Incorrect API key provided: sk-abc.", "code": 401}),
            ["HTTP 401", "Incorrect API key provided", "api_key"],
        ),
        (
            400,
            error_body(
                error={
                    "code": 400,
                    "message": "the request exceeds the available context size",
                    "type": "exceed_context_size_error",
                }
            ),
            ["HTTP 400", "exceeds the available context size"],
        ),
        (
            400,  # vLLM puts the message at the top level
            error_body(object="error", message="max_tokens is too large", code=400),
            ["HTTP 400", "max_tokens is too large"],
        ),
        (404, error_body(detail="Not Found"), ["HTTP 404", "Not Found", "check base_url"]),
        (500, error_body(error="llama runner process has terminated"), ["HTTP 500", "runner"]),
        (502, b"<html>Bad Gateway</html>", ["HTTP 502", "<html>Bad Gateway</html>"]),
    ],
)
async def test_http_errors_name_the_status_and_the_servers_message(
    status: int, body: bytes, expected: list[str]
) -> None:
    server = Server(body, status, kind="application/json")
    message = await fails(server.provider())
    assert f"{server.url}/chat/completions" in message
    for part in expected:
        assert part in message


# llama-cpp-python's server answers a null content beside tool_calls with this.
NULL_REFUSED = json.dumps(
    {
        "detail": [
            {"loc": ["body", "messages", 1, "content"], "msg": "Input should be a valid string"}
        ]
    }
).encode()
CALLED = [
    Message.user("Weather in Paris?"),
    Message.assistant("", (ToolCall(WEATHER.name, {"location": "Paris"}, id="call_1"),)),
    Message.tool(ToolResult("call_1", WEATHER.name, "18°C")),
]


def sent_contents(server: Server) -> list[object]:
    return [json.loads(r.content)["messages"][1]["content"] for r in server.requests]


async def test_a_server_that_refuses_null_content_beside_calls_is_asked_again_with_empty() -> None:
    server = Server(sse(delta(content="Sunny."), delta("stop")), first=(500, NULL_REFUSED))
    provider = server.provider()
    events = await run(provider, CALLED)
    assert text_of(events, TextDelta) == "Sunny."
    assert sent_contents(server) == [None, ""]
    await run(provider, CALLED)  # the provider remembers: no refusal to wait for again
    assert sent_contents(server) == [None, "", ""]


async def test_a_refusal_that_is_not_about_content_is_not_asked_again() -> None:
    refusal = json.dumps({"error": {"message": "max_tokens is too large"}}).encode()
    server = Server(sse(delta(content="never sent")), first=(400, refusal))
    with pytest.raises(ProviderError, match="max_tokens is too large"):
        await run(server.provider(), CALLED)
    assert sent_contents(server) == [None]


async def test_a_broken_stream_line_is_quoted() -> None:
    body = sse(delta(content="Hi"), '{"choices":[{"index":0,"delta":{"content":')
    message = await fails(Server(body).provider())
    assert "not valid JSON" in message
    assert '{"choices":[{"index":0,"delta":{"content":' in message


@pytest.mark.parametrize(
    "body",
    [
        sse({"error": {"message": "CUDA error: out of memory", "type": "server_error"}}),
        b'error: {"code":500,"message":"CUDA error: out of memory","type":"server_error"}\n\n',
    ],
)
async def test_errors_reported_inside_the_stream(body: bytes) -> None:
    message = await fails(Server(body).provider())
    assert "mid-stream" in message
    assert "CUDA error: out of memory" in message


async def test_a_200_that_is_not_a_stream_says_so() -> None:
    server = Server(b"<!doctype html><title>llama.cpp</title>", kind="text/html")
    message = await fails(server.provider())
    assert "without a chat completion stream" in message
    assert "<!doctype html>" in message


async def test_invalid_base_url() -> None:
    message = await fails(OpenAICompatProvider("localhost:8080/v1", "m"))
    assert "invalid base_url 'localhost:8080/v1'" in message


# --- errors from the transport, over real sockets ---------------------------------------

Handler = Callable[[ByteStream], Awaitable[None]]


@asynccontextmanager
async def tcp_server(handler: Handler) -> AsyncIterator[str]:
    listener = await anyio.create_tcp_listener(local_host="127.0.0.1")
    port = listener.extra(SocketAttribute.local_port)
    async with anyio.create_task_group() as group:
        group.start_soon(listener.serve, handler)
        try:
            yield f"http://127.0.0.1:{port}/v1"
        finally:
            group.cancel_scope.cancel()


async def read_request(stream: ByteStream) -> bytes:
    data = b""
    while b"\r\n\r\n" not in data:
        data += await stream.receive()
    head, _, body = data.partition(b"\r\n\r\n")
    length = next(
        int(line.split(b":")[1])
        for line in head.split(b"\r\n")
        if line.lower().startswith(b"content-length")
    )
    while len(body) < length:
        body += await stream.receive()
    return body


def reply(body: bytes, length: int | None = None) -> bytes:
    size = f"content-length: {length}\r\n" if length is not None else "connection: close\r\n"
    return f"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n{size}\r\n".encode() + body


async def events_from(handler: Handler) -> list[StreamEvent]:
    """What the provider streams from a real socket served by `handler`."""
    async with tcp_server(handler) as url:
        provider = OpenAICompatProvider(url, "qwen3")
        events = await run(provider, tools=[READ_FILE])
        await provider.aclose()
    return events


async def failure_from(handler: Handler, timeout: float = 600) -> str:
    """The ProviderError message from a real socket served by `handler`."""
    async with tcp_server(handler) as url:
        provider = OpenAICompatProvider(url, "m", timeout=timeout)
        message = await fails(provider)
        await provider.aclose()
    return message


async def test_real_socket_stream() -> None:
    async def handler(stream: ByteStream) -> None:
        assert json.loads(await read_request(stream))["stream"] is True
        await stream.send(reply(recording("llama_server_reasoning_tool_call.sse")))
        await stream.aclose()

    events = await events_from(handler)
    assert calls_of(events)[0].name == "filesystem:read_file"


async def test_connection_refused() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    message = await fails(OpenAICompatProvider(f"http://127.0.0.1:{port}/v1", "m"))
    assert message.startswith(
        f"cannot reach http://127.0.0.1:{port}/v1/chat/completions: is the server running?"
    )


@pytest.mark.parametrize("sends_headers", [False, True])
async def test_read_timeout(sends_headers: bool) -> None:
    async def handler(stream: ByteStream) -> None:
        await read_request(stream)
        if sends_headers:
            await stream.send(reply(b'data: {"choices":[{"delta":{"content":"Hi"}}]}\n\n'))
        await anyio.sleep_forever()  # a stuck model; cancelled when the test ends

    message = await failure_from(handler, timeout=0.2)
    assert "read timeout" in message
    assert "0.2s" in message


async def test_connection_cut_mid_body() -> None:
    async def handler(stream: ByteStream) -> None:
        await read_request(stream)
        await stream.send(reply(b'data: {"choices":[{"delta":{"content":"Hi"}}]}\n\n', 10_000))
        await stream.aclose()

    message = await failure_from(handler)
    assert "broke off" in message


async def test_a_kept_alive_connection_closed_as_it_is_reused_is_retried_once() -> None:
    # The race a server's idle timeout causes (llama-server and httpx both keep connections
    # 5 s): the request leaves on a connection the server closes without answering.
    requests: list[bytes] = []

    async def handler(stream: ByteStream) -> None:
        requests.append(await read_request(stream))
        if len(requests) == 1:
            await stream.aclose()
            return
        await stream.send(reply(recording("llama_server_reasoning_tool_call.sse")))
        await stream.aclose()

    events = await events_from(handler)
    assert len(requests) == 2 and requests[0] == requests[1]
    assert calls_of(events)[0].name == "filesystem:read_file"


async def test_a_server_that_closes_each_connection_after_its_answer_is_asked_again() -> None:
    # Like llama-server, which closes after answers: every turn still gets through. When
    # the next turn leaves before the close is seen ("Can not write request body") it is
    # sent again; that race is replayed by tests/e2e/test_llama_server_real.py, not here.
    answer = recording("openai_text.sse")
    answered = 0

    async def handler(stream: ByteStream) -> None:
        nonlocal answered
        await read_request(stream)
        await stream.send(reply(answer, len(answer)))
        answered += 1
        await stream.aclose()

    async with tcp_server(handler) as url:
        provider = OpenAICompatProvider(url, "m")
        for _ in range(3):
            events = [e async for e in provider.stream(ASK, [], DEFAULTS)]
            assert text_of(events, TextDelta)
        await provider.aclose()
    assert answered == 3


async def test_a_server_that_always_closes_without_answering_fails_after_one_retry() -> None:
    requests: list[bytes] = []

    async def handler(stream: ByteStream) -> None:
        requests.append(await read_request(stream))
        await stream.aclose()

    message = await failure_from(handler)
    assert len(requests) == 2
    assert "closed the connection without answering" in message


# --- lifecycle --------------------------------------------------------------------------


async def test_aclose_closes_the_connections() -> None:
    server = Server(recording("openai_text.sse"))
    provider = server.provider()
    assert isinstance(provider, Provider)
    await run(provider)
    await provider.aclose()
    await provider.aclose()  # twice is harmless
    assert await run(provider)  # and a closed provider opens new connections when used again


async def test_request_body_asks_for_the_answers_shape() -> None:
    schema = {"type": "object", "properties": {"sum": {"type": "integer"}}}
    for answer, sent in (
        ("json", {"type": "json_object"}),
        (schema, {"type": "json_schema", "json_schema": {"name": "answer", "schema": schema}}),
    ):
        server = Server(recording("openai_text.sse"))
        settings = GenerationSettings(response_format=answer, top_p=0.9)
        await run(server.provider(), [Message.user("Sum?")], [], settings)
        assert server.sent["response_format"] == sent
        assert server.sent["top_p"] == 0.9


async def test_think_reaches_ollama_as_reasoning_effort_and_no_one_else() -> None:
    for name, think, sent in (("ollama", False, "none"), ("ollama", True, "medium")):
        server = Server(recording("openai_text.sse"))
        provider = server.provider(name=name)
        await run(provider, [Message.user("Hi")], [], GenerationSettings(think=think))
        assert server.sent["reasoning_effort"] == sent
    server = Server(recording("openai_text.sse"))
    await run(server.provider(), [Message.user("Hi")], [], GenerationSettings(think=False))
    assert "reasoning_effort" not in server.sent


async def test_template_kwargs_are_sent_as_chat_template_kwargs() -> None:
    """llama-server, vLLM and SGLang read them under this name and render their template."""
    server = Server(recording("openai_text.sse"))
    settings = GenerationSettings(template_kwargs={"enable_thinking": False})
    await run(server.provider(), [Message.user("Hi")], [], settings)
    assert server.sent["chat_template_kwargs"] == {"enable_thinking": False}
    server = Server(recording("openai_text.sse"))
    await run(server.provider(), [Message.user("Hi")], [], GenerationSettings())
    assert "chat_template_kwargs" not in server.sent
