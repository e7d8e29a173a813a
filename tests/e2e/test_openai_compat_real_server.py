"""OpenAICompatProvider against a real OpenAI-compatible server: llama-cpp-python's own
`llama_cpp.server` in a subprocess on 127.0.0.1, serving the real embedded GGUF model.

What this server does (llama-cpp-python 0.3.36, chat_format chatml-function-calling):
streams text; streams a tool call only when tool_choice names the function ("required",
and "auto" when the model picks a tool, fail after the 200 headers: an empty body); ignores
stream_options.include_usage, so a streamed turn carries no usage; serves its one model
whatever `model` a request names.
"""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import httpx
import pytest
from tests.support.real_servers import free_port

from farmhand.errors import ProviderError
from farmhand.messages import (
    Finish,
    Message,
    StreamEvent,
    TextDelta,
    ToolCall,
    ToolCallEvent,
    ToolResult,
    Usage,
)
from farmhand.models.assemble import ensure_model
from farmhand.providers.base import GenerationSettings
from farmhand.providers.openai_compat import OpenAICompatProvider
from farmhand.tools.choice import ToolChoice
from farmhand.tools.definition import ToolDefinition

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]

# What `llama-cpp-python[server]` adds; without them `python -m llama_cpp.server` cannot start.
SERVER_MODULES = ["llama_cpp", "fastapi", "sse_starlette", "starlette_context", "pydantic_settings"]
ALIAS = "qwen2.5-coder-0.5b"
API_KEY = "e2e-secret"
STARTUP_DEADLINE = 120.0
WEATHER = ToolDefinition(
    "weather:get_weather",  # not provider-safe: goes out as weather__get_weather
    "Get the current weather for a city.",
    {
        "type": "object",
        "properties": {"city": {"type": "string", "description": "The city name, e.g. Paris"}},
        "required": ["city"],
    },
)
GREEDY = GenerationSettings(temperature=0.0, seed=0, max_tokens=48)


def _log_tail(log: Path) -> str:
    return "\n".join(log.read_text(errors="replace").splitlines()[-30:])


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The base URL (ending in /v1) of a running llama_cpp.server; killed and reaped after."""
    missing = [m for m in SERVER_MODULES if importlib.util.find_spec(m) is None]
    if missing:
        pytest.fail(
            f"llama_cpp.server cannot start: missing modules {missing}; install "
            '"llama-cpp-python[server]" deps: fastapi pydantic-settings sse-starlette '
            '"starlette-context>=0.3.6,<0.4"'
        )
    model = ensure_model("qwen2.5-coder:0.5b")
    port = free_port()
    log = tmp_path_factory.mktemp("llama-server") / "server.log"
    command = [
        sys.executable, "-m", "llama_cpp.server", "--model", str(model),
        "--model_alias", ALIAS, "--host", "127.0.0.1", "--port", str(port),
        "--n_ctx", "4096", "--chat_format", "chatml-function-calling",
        "--api_key", API_KEY,
    ]  # fmt: skip
    with log.open("wb") as out:
        proc = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}/v1"
    try:
        _wait_until_serving(proc, base, log)
        yield base
    finally:
        proc.kill()
        proc.wait(timeout=30)


def _wait_until_serving(proc: subprocess.Popen[bytes], base: str, log: Path) -> None:
    deadline = time.monotonic() + STARTUP_DEADLINE
    headers = {"Authorization": f"Bearer {API_KEY}"}
    with httpx.Client(timeout=5) as client:
        while time.monotonic() < deadline:
            try:
                response = client.get(f"{base}/models", headers=headers)
                if response.status_code == 200:
                    assert ALIAS in response.text, response.text
                    return
            except httpx.TransportError:
                pass
            try:  # waits on the process: an exit ends the wait at once
                code = proc.wait(timeout=0.2)
            except subprocess.TimeoutExpired:
                continue
            pytest.fail(f"llama_cpp.server exited with {code}:\n{_log_tail(log)}")
    pytest.fail(f"llama_cpp.server not serving after {STARTUP_DEADLINE}s:\n{_log_tail(log)}")


async def _collect(
    provider: OpenAICompatProvider,
    messages: Sequence[Message],
    tools: Sequence[ToolDefinition] = (),
    settings: GenerationSettings = GREEDY,
) -> list[StreamEvent]:
    try:
        return [event async for event in provider.stream(messages, tools, settings)]
    finally:
        await provider.aclose()


def _provider(
    base: str, api_key: str = API_KEY, extra_params: dict[str, object] | None = None
) -> OpenAICompatProvider:
    return OpenAICompatProvider(base, ALIAS, api_key, timeout=300, extra_params=extra_params)


async def test_streams_text_then_one_finish(server: str) -> None:
    ask = [Message.user("Say hello to Ada in one short sentence.")]
    events = await _collect(_provider(server), ask)

    *body, finish = events
    assert isinstance(finish, Finish), events
    assert finish.reason in ("stop", "length")
    assert body and all(isinstance(e, TextDelta) for e in body), events
    assert len(body) > 1  # streamed token by token, not one block
    assert "".join(e.text for e in body if isinstance(e, TextDelta)).strip()
    # This server sends no usage in a stream (it ignores stream_options.include_usage), so
    # the provider's zero default is what arrives; a server that sends it is unit-tested.
    assert isinstance(finish.usage, Usage)


async def test_forced_tool_call_streams_back_under_the_farmhand_name(server: str) -> None:
    choice = ToolChoice.tool(WEATHER.name)
    settings = GenerationSettings(temperature=0.0, seed=0, max_tokens=64, tool_choice=choice)
    ask = [Message.user("What is the weather like in Paris right now?")]
    events = await _collect(_provider(server), ask, [WEATHER], settings)

    calls = [e.call for e in events if isinstance(e, ToolCallEvent)]
    assert len(calls) == 1, events
    call = calls[0]
    assert call.name == "weather:get_weather"  # sent as weather__get_weather, mapped back
    assert call.parse_error is None
    assert isinstance(call.arguments, dict)
    assert "paris" in str(call.arguments.get("city")).lower(), call.arguments
    assert call.id.startswith("call_")  # the server's own id, kept
    assert isinstance(events[-1], Finish) and events[-1].reason == "tool_calls"
    assert sum(isinstance(e, Finish) for e in events) == 1


async def test_a_history_with_a_tool_call_is_accepted(server: str) -> None:
    call = ToolCall("weather:get_weather", {"city": "Paris"}, id="call_1")
    history = [
        Message.user("What is the weather like in Paris right now?"),
        Message.assistant("", (call,)),
        Message.tool(ToolResult(call.id, call.name, "Sunny, 24 degrees Celsius.")),
    ]
    # No tools offered this turn: the history's farmhand names must still go out safe.
    # This server refuses OpenAI's content: null beside tool_calls (HTTP 500, a validation
    # error); the provider asks again with "".
    events = await _collect(_provider(server), history)

    assert isinstance(events[-1], Finish) and events[-1].reason in ("stop", "length")
    assert any(isinstance(e, TextDelta) and e.text.strip() for e in events), events


async def test_refused_api_key_is_a_provider_error_with_the_server_message(server: str) -> None:
    with pytest.raises(ProviderError) as caught:
        await _collect(_provider(server, api_key="wrong"), [Message.user("hi")])
    message = str(caught.value)
    assert "HTTP 401" in message and "Invalid API key" in message  # the server's own words
    assert "an api key was sent but refused" in message


async def test_rejected_request_is_a_provider_error_with_the_server_message(server: str) -> None:
    provider = _provider(server, extra_params={"top_p": 5})  # the server allows 0..1
    with pytest.raises(ProviderError) as caught:
        await _collect(provider, [Message.user("hi")])
    message = str(caught.value)
    # This server answers a validation failure with 500 and an OpenAI-style error body.
    assert re.search(r"answered HTTP (422|500) ", message), message
    assert "top_p" in message and "less than or equal to 1" in message
