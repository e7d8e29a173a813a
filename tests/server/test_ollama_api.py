"""The Ollama dialect against a running server: the real `ollama` SDK where it can say
what is tested, raw HTTP (httpx) for the MCP extensions the SDK has no arguments for."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import httpx
import ollama
import pytest
from tests.server.ollama_serving import (
    FILES,
    PANTRY,
    WEATHER_TOOL,
    make_config,
    serving,
    stdio_server,
)

from farmhand.config.models import FarmhandConfig
from farmhand.errors import ProviderError
from farmhand.messages import Message, ToolCall, Usage
from farmhand.providers.scripted import ScriptedProvider, Step
from farmhand.tools.definition import ToolDefinition


@pytest.fixture
def provider() -> ScriptedProvider:
    return ScriptedProvider()


@pytest.fixture
def config() -> FarmhandConfig:
    return make_config(stdio_server("pantry", PANTRY))


@pytest.fixture
def base_url(config: FarmhandConfig, provider: ScriptedProvider, tmp_path: Path) -> Iterator[str]:
    with serving(config, provider, tmp_path / "home") as url:
        yield url
    provider.assert_done()


@pytest.fixture
def client(base_url: str) -> ollama.Client:
    return ollama.Client(host=base_url)


def post(base_url: str, path: str, body: object, **kwargs: Any) -> httpx.Response:
    return httpx.post(f"{base_url}{path}", json=body, timeout=60, **kwargs)


def chat_body(**fields: Any) -> dict[str, Any]:
    return {
        "model": "scripted",
        "messages": [{"role": "user", "content": "hi"}],
        "stream": False,
        **fields,
    }


def ndjson(response: httpx.Response) -> list[dict[str, Any]]:
    return [json.loads(line) for line in response.text.splitlines() if line.strip()]


# Plain chat


def test_chat_without_streaming(client: ollama.Client, provider: ScriptedProvider) -> None:
    provider.add(Step.text("Hello there!", usage=Usage(12, 3)))
    response = client.chat(model="scripted", messages=[{"role": "user", "content": "hi"}])
    assert response.message.role == "assistant"
    assert response.message.content == "Hello there!"
    assert response.done is True
    assert response.done_reason == "stop"
    assert response.prompt_eval_count == 12
    assert response.eval_count == 3
    assert response.total_duration is not None and response.total_duration > 0
    assert provider.requests[0].messages == (Message.user("hi"),)


def test_chat_streams_by_default(client: ollama.Client, provider: ScriptedProvider) -> None:
    provider.add(Step.text("One two three four.", reasoning="Counting."))
    parts = list(
        client.chat(model="scripted", messages=[{"role": "user", "content": "count"}], stream=True)
    )
    assert "".join(p.message.content or "" for p in parts) == "One two three four."
    assert "".join(p.message.thinking or "" for p in parts) == "Counting."
    assert len([p for p in parts if p.message.content]) > 1  # really streamed
    assert [p.done for p in parts] == [False] * (len(parts) - 1) + [True]
    assert parts[-1].done_reason == "stop"


def test_stream_lines_carry_the_task(base_url: str, provider: ScriptedProvider) -> None:
    provider.add(Step.text("Hello there!"))
    body = chat_body()
    del body["stream"]  # Ollama's default: stream
    response = post(base_url, "/api/chat", body)
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/x-ndjson"
    lines = ndjson(response)
    assert {line["task_id"] for line in lines} == {lines[0]["task_id"]}
    assert [line["task_status"] for line in lines] == ["working"] * (len(lines) - 1) + ["completed"]
    assert lines[-1]["done"] is True
    assert all(line["model"] == "scripted" and line["created_at"].endswith("Z") for line in lines)


@pytest.mark.anyio
async def test_async_client_streams(base_url: str, provider: ScriptedProvider) -> None:
    provider.add(Step.text("Async hello."))
    client = ollama.AsyncClient(host=base_url)
    stream = await client.chat(
        model="plain", messages=[{"role": "user", "content": "hi"}], stream=True
    )
    parts = [part async for part in stream]
    assert "".join(p.message.content or "" for p in parts) == "Async hello."
    assert parts[-1].done
    assert (await client.list()).models[0].model == "scripted"


def test_version(base_url: str) -> None:
    response = httpx.get(f"{base_url}/api/version")
    assert response.status_code == 200
    assert isinstance(response.json()["version"], str)


def test_options_reach_the_model(client: ollama.Client, provider: ScriptedProvider) -> None:
    provider.add(Step.text("ok"))
    client.chat(
        model="scripted",
        messages=[{"role": "system", "content": "Be brief."}, {"role": "user", "content": "hi"}],
        options={"temperature": 0.2, "num_predict": 64, "seed": 7, "stop": ["\n\n"]},
        format="json",
        keep_alive="5m",
    )
    settings = provider.requests[0].settings
    assert (settings.temperature, settings.max_tokens, settings.seed) == (0.2, 64, 7)
    assert settings.stop == ("\n\n",)
    assert provider.requests[0].messages[0] == Message.system("Be brief.")


# Client tools


def test_client_tool_calls_come_back_in_ollama_shape(
    client: ollama.Client, provider: ScriptedProvider
) -> None:
    def offered(_: Sequence[Message], tools: Sequence[ToolDefinition]) -> None:
        assert [t.name for t in tools] == ["get_weather"]

    provider.add(
        Step.calls(ToolCall("get_weather", {"city": "Paris"}), expect=offered),
    )
    messages: list[Any] = [{"role": "user", "content": "Weather in Paris?"}]
    response = client.chat(model="plain", messages=messages, tools=[WEATHER_TOOL])
    calls = response.message.tool_calls
    assert calls is not None and len(calls) == 1
    assert calls[0].function.name == "get_weather"
    assert calls[0].function.arguments == {"city": "Paris"}

    def sees_result(history: Sequence[Message], _: Sequence[ToolDefinition]) -> None:
        call = history[-2].tool_calls[0]
        assert (call.name, call.arguments) == ("get_weather", {"city": "Paris"})
        assert history[-1].role == "tool"
        assert history[-1].tool_call_id == call.id
        assert history[-1].content == "Sunny, 21C"

    provider.add(Step.text("It is sunny in Paris.", expect=sees_result))
    messages += [
        response.message,
        {"role": "tool", "content": "Sunny, 21C", "tool_name": "get_weather"},
    ]
    answer = client.chat(model="plain", messages=messages, tools=[WEATHER_TOOL])
    assert answer.message.content == "It is sunny in Paris."
    assert not answer.message.tool_calls


def test_client_tool_calls_stream(client: ollama.Client, provider: ScriptedProvider) -> None:
    provider.add(Step.calls(ToolCall("get_weather", {"city": "Oslo"}), text="Checking."))
    parts = list(
        client.chat(
            model="plain",
            messages=[{"role": "user", "content": "Weather in Oslo?"}],
            tools=[WEATHER_TOOL],
            stream=True,
        )
    )
    calls = [c for p in parts for c in (p.message.tool_calls or [])]
    assert [(c.function.name, c.function.arguments) for c in calls] == [
        ("get_weather", {"city": "Oslo"})
    ]
    assert "".join(p.message.content or "" for p in parts) == "Checking."
    assert parts[-1].done and parts[-1].done_reason == "stop"


# Server-side MCP tools


def test_configured_server_tools_with_tool_results(
    base_url: str, provider: ScriptedProvider
) -> None:
    def offered(_: Sequence[Message], tools: Sequence[ToolDefinition]) -> None:
        assert sorted(t.name for t in tools) == ["pantry:echo", "pantry:env", "pantry:pid"]

    def sees_echo(history: Sequence[Message], _: Sequence[ToolDefinition]) -> None:
        assert history[-1].content == "hello pantry"

    provider.add(
        Step.calls(ToolCall("pantry:echo", {"text": "hello pantry"}), expect=offered),
        Step.text("The pantry said hello.", expect=sees_echo),
    )
    body = chat_body(jit_tools=False, include_tool_results=True)
    response = post(base_url, "/api/chat", body)
    assert response.status_code == 200, response.text
    data = response.json()
    assert data["message"] == {
        "role": "assistant",
        "content": "The pantry said hello.",
        "tool_calls": [
            {
                "function": {"name": "pantry:echo", "arguments": {"text": "hello pantry"}},
                "executed": True,
            }
        ],
    }
    assert data["tool_results"] == [
        {
            "tool_name": "pantry:echo",
            "arguments": {"text": "hello pantry"},
            "content": "hello pantry",
        }
    ]
    assert data["task_status"] == "completed"
    assert data["done_reason"] == "stop"


def test_tool_results_only_when_asked(base_url: str, provider: ScriptedProvider) -> None:
    provider.add(Step.calls(ToolCall("pantry:echo", {"text": "x"})), Step.text("done"))
    data = post(base_url, "/api/chat", chat_body(jit_tools=False)).json()
    assert "tool_results" not in data
    assert data["message"]["content"] == "done"


def test_inline_stdio_server_with_jit_discovery(base_url: str, provider: ScriptedProvider) -> None:
    def discover_only(_: Sequence[Message], tools: Sequence[ToolDefinition]) -> None:
        assert [t.name for t in tools] == ["mcp_discover"]  # jit_tools defaults to true

    def injected(_: Sequence[Message], tools: Sequence[ToolDefinition]) -> None:
        assert "files:list_directory" in [t.name for t in tools]

    provider.add(
        Step.calls(ToolCall("mcp_discover", {"pattern": "*directory*"}), expect=discover_only),
        Step.calls(ToolCall("files:list_directory", {"path": "/tmp"}), expect=injected),
        Step.text("There is notes.txt and docs."),
    )
    server = {"name": "files", "command": sys.executable, "args": [str(FILES)]}
    body = chat_body(model="plain", mcp_servers=[server], include_tool_results=True)
    response = post(base_url, "/api/chat", body)
    assert response.status_code == 200, response.text
    results = response.json()["tool_results"]
    assert [r["tool_name"] for r in results] == ["mcp_discover", "files:list_directory"]
    assert results[1]["content"] == "[FILE] /tmp/notes.txt\n[DIR] /tmp/docs"


def test_refused_inline_server_is_a_403_with_the_reason(
    base_url: str, client: ollama.Client
) -> None:
    server = {"name": "sh", "command": "bash", "args": ["-c", "echo hi"]}
    response = post(base_url, "/api/chat", chat_body(mcp_servers=[server]))
    assert response.status_code == 403
    assert "'bash' is not a launcher" in response.json()["error"]
    unsafe = {"name": "x", "command": "bash", "allow_unsafe_command": True}
    response = post(base_url, "/api/chat", chat_body(mcp_servers=[unsafe]))
    assert response.status_code == 400
    assert "allow_unsafe_command" in response.json()["error"]


def test_round_limit_defaults_to_fifteen(base_url: str, provider: ScriptedProvider) -> None:
    provider.add(*[Step.calls(ToolCall("pantry:echo", {"text": str(i)})) for i in range(16)])
    provider.add(Step.text("gave up"))
    data = post(base_url, "/api/chat", chat_body(jit_tools=False)).json()
    assert data["done_reason"] == "round_limit"
    assert len(provider.requests) == 17  # 15 rounds, the 16th call dropped, one answer turn


# Tool search and listing


def test_tools_search_ranks_and_counts(base_url: str) -> None:
    files = {"name": "files", "command": sys.executable, "args": [str(FILES)]}
    body = {"pattern": "*directory*", "mcp_servers": [files], "context": "list the folder"}
    response = post(base_url, "/api/tools/search", body)
    assert response.status_code == 200, response.text
    data = response.json()
    assert data["pattern"] == "*directory*"
    assert data["total"] == 2
    assert [t["name"] for t in data["tools"]] == ["files:list_directory", "files:create_directory"]
    first = data["tools"][0]
    assert first["server"] == "files"
    assert first["description"] == "List the entries of a directory."
    assert first["parameters"]["required"] == ["path"]

    everything = post(base_url, "/api/tools/search", {"pattern": "*", "mcp_servers": [files]})
    names = {t["name"] for t in everything.json()["tools"]}
    assert {"files:read_file", "pantry:echo", "pantry:env", "pantry:pid"} <= names
    assert everything.json()["total"] == 6


def test_tools_lists_configured_servers(base_url: str) -> None:
    response = httpx.get(f"{base_url}/api/tools", timeout=60)
    assert response.status_code == 200
    assert sorted(t["name"] for t in response.json()["tools"]) == [
        "pantry:echo",
        "pantry:env",
        "pantry:pid",
    ]
    plain = httpx.get(f"{base_url}/api/tools", params={"model": "plain"}, timeout=60)
    assert plain.json() == {"tools": [], "total": 0}


def test_tags_lists_the_configured_models(client: ollama.Client) -> None:
    listed = client.list()
    assert [m.model for m in listed.models] == ["scripted", "plain"]
    assert listed.models[0].details is not None
    assert listed.models[0].details.family == "openai"


# Tasks


def test_task_ids_and_task_lookup(base_url: str, provider: ScriptedProvider) -> None:
    provider.add(Step.text("one"), Step.text("two"))
    first = post(base_url, "/api/chat", chat_body()).json()
    assert first["task_status"] == "completed"
    task = httpx.get(f"{base_url}/api/tasks/{first['task_id']}").json()
    assert task["task_id"] == first["task_id"]
    assert task["task_status"] == "completed"
    assert task["model"] == "scripted"
    assert task["error"] is None
    assert task["created_at"] <= task["updated_at"]

    mine = post(base_url, "/api/chat", chat_body(task_id="my-task-1")).json()
    assert mine["task_id"] == "my-task-1"
    assert httpx.get(f"{base_url}/api/tasks/my-task-1").json()["task_status"] == "completed"

    missing = httpx.get(f"{base_url}/api/tasks/nope")
    assert missing.status_code == 404
    assert "nope" in missing.json()["error"]


def test_failed_task(base_url: str, provider: ScriptedProvider) -> None:
    provider.add(Step.fail(ProviderError("backend is down")))
    response = post(base_url, "/api/chat", chat_body())
    assert response.status_code == 502
    data = response.json()
    assert data["error"] == "backend is down"
    assert data["task_status"] == "failed"
    task = httpx.get(f"{base_url}/api/tasks/{data['task_id']}").json()
    assert (task["task_status"], task["error"]) == ("failed", "backend is down")


def test_failure_mid_stream_is_an_error_line(
    base_url: str, client: ollama.Client, provider: ScriptedProvider
) -> None:
    provider.add(
        Step.calls(ToolCall("pantry:echo", {"text": "x"}), text="Let me look."),
        Step.fail(ProviderError("backend went away")),
    )
    body = {**chat_body(jit_tools=False), "stream": True}
    response = post(base_url, "/api/chat", body)
    assert response.status_code == 200
    lines = ndjson(response)
    assert lines[0]["message"]["content"]
    assert lines[-1]["error"] == "backend went away"
    assert lines[-1]["task_status"] == "failed"

    provider.add(Step.fail(ProviderError("still down")))
    with pytest.raises(ollama.ResponseError) as raised:
        list(
            client.chat(model="scripted", messages=[{"role": "user", "content": "hi"}], stream=True)
        )
    assert raised.value.status_code == 502
    assert "still down" in raised.value.error


# Bad requests


@pytest.mark.parametrize(
    ("body", "status", "says"),
    [
        ("{not json", 400, "not valid JSON"),
        ("", 400, "empty"),
        ("[1, 2]", 400, "JSON object"),
        ({"messages": [{"role": "user", "content": "hi"}]}, 400, "model is required"),
        (chat_body(model="gpt-9"), 404, "unknown model 'gpt-9'"),
        (chat_body(messages="hi"), 400, "messages"),
        (chat_body(messages=[], keep_alive="later"), 400, "keep_alive must be"),
        (chat_body(messages=[{"role": "wizard", "content": "x"}]), 400, "messages[0].role"),
        (chat_body(stream="yes"), 400, "stream"),
        (chat_body(max_tool_rounds=0), 400, "max_tool_rounds"),
        (chat_body(tool_timeout="soon"), 400, "tool_timeout"),
        (chat_body(include_tool_results=1), 400, "include_tool_results"),
        (chat_body(options={"temperature": "hot"}), 400, "options.temperature"),
        (chat_body(tools=[{"type": "function", "function": {"name": 5}}]), 400, "tools"),
        (chat_body(mcp_servers={"name": "x"}), 400, "mcp_servers"),
        (chat_body(mcp_servers=[{"name": "x"}]), 400, "no server named 'x'"),
        (chat_body(mcp_servers=[{"name": "x", "transport": "stdio"}]), 400, "needs a command"),
        (
            chat_body(mcp_servers=[{"name": "x", "command": sys.executable, "args": ["a;b"]}]),
            403,
            "metacharacters",
        ),
        (chat_body(mcp_servers=[{"name": "x", "command": "no-such-program"}]), 400, "not found"),
        (
            chat_body(
                messages=[
                    {
                        "role": "assistant",
                        "tool_calls": [{"function": {"name": "f", "arguments": "[1]"}}],
                    }
                ]
            ),
            400,
            "JSON object",
        ),
        (chat_body(task_id=""), 400, "task_id"),
    ],
)
def test_bad_chat_requests(base_url: str, body: object, status: int, says: str) -> None:
    content = body if isinstance(body, str) else json.dumps(body)
    response = httpx.post(
        f"{base_url}/api/chat",
        content=content,
        headers={"content-type": "application/json"},
        timeout=30,
    )
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert isinstance(error, str)
    assert says in error


@pytest.mark.parametrize(
    ("body", "status", "says"),
    [
        ({"pattern": 5}, 400, "pattern"),
        ({"pattern": "*", "mcp_servers": [{"name": "x", "command": "env"}]}, 403, "launcher"),
        ({"pattern": "*", "mcp_servers": [{"name": "pantry", "command": "python"}]}, 400, "rename"),
    ],
)
def test_bad_search_requests(base_url: str, body: object, status: int, says: str) -> None:
    response = post(base_url, "/api/tools/search", body)
    assert response.status_code == status, response.text
    assert says in response.json()["error"]


def test_sdk_sees_errors_as_response_errors(client: ollama.Client) -> None:
    with pytest.raises(ollama.ResponseError) as raised:
        client.chat(model="nope", messages=[{"role": "user", "content": "hi"}])
    assert raised.value.status_code == 404
    assert "unknown model 'nope'" in raised.value.error
