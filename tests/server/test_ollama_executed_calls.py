"""The MCP calls farmhand ran, as the Ollama MCP fork reports them: in the final message's
`tool_calls` (`filesystem:list_directory`), marked `executed`, for a client with no tools
of its own; never in a way that asks a client to run them again. The real `ollama` SDK
against a real server (uvicorn) whose model uses the real filesystem MCP server, with a
scripted model."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import httpx
import ollama
import pytest
from tests.server.ollama_serving import WEATHER_TOOL, make_config, serving

from farmhand.messages import Message, ToolCall
from farmhand.providers.scripted import ScriptedProvider, Step
from farmhand.tools.definition import ToolDefinition
from farmhand.toolsets.mcp.known_servers import filesystem_server


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    folder = tmp_path / "shared"
    folder.mkdir()
    (folder / "notes.txt").write_text("milk, eggs\n")
    return folder


@pytest.fixture
def provider() -> ScriptedProvider:
    return ScriptedProvider()


@pytest.fixture
def base_url(folder: Path, provider: ScriptedProvider, tmp_path: Path) -> Iterator[str]:
    config = make_config(filesystem_server(folder))
    with serving(config, provider, tmp_path / "home") as url:
        yield url
    provider.assert_done()


def lists_the_folder(provider: ScriptedProvider, folder: Path, answer: str) -> None:
    """The model discovers the directory tool (JIT is on in Ollama's API), calls it on the
    real server, and answers from what it saw."""

    def saw_listing(history: Sequence[Message], _: Sequence[ToolDefinition]) -> None:
        assert history[-1].role == "tool" and "[FILE] notes.txt" in history[-1].content

    provider.add(
        Step.calls(ToolCall("mcp_discover", {"pattern": "*list_directory*"})),
        Step.calls(ToolCall("filesystem:list_directory", {"path": str(folder)})),
        Step.text(answer, expect=saw_listing),
    )


def test_the_calls_that_ran_are_listed_as_the_fork_lists_them(
    base_url: str, provider: ScriptedProvider, folder: Path
) -> None:
    lists_the_folder(provider, folder, "There is notes.txt.")
    client = ollama.Client(host=base_url)
    question = {"role": "user", "content": "List the files"}
    response = client.chat(model="scripted", messages=[question])
    assert response.message.content == "There is notes.txt."
    calls = response.message.tool_calls or []
    assert [(c.function.name, dict(c.function.arguments)) for c in calls] == [
        ("filesystem:list_directory", {"path": str(folder)})
    ]  # the discovery step is farmhand's own, not an MCP server's call

    # The raw body marks them, and tool_results (when asked) holds what they returned.
    lists_the_folder(provider, folder, "Still notes.txt.")
    body = {"model": "scripted", "messages": [question], "stream": False}
    raw = httpx.post(f"{base_url}/api/chat", json={**body, "include_tool_results": True}).json()
    assert raw["message"]["tool_calls"] == [
        {
            "function": {"name": "filesystem:list_directory", "arguments": {"path": str(folder)}},
            "executed": True,
        }
    ]
    listing = raw["tool_results"][1]
    assert (listing["tool_name"], listing["content"]) == (
        "filesystem:list_directory",
        "[FILE] notes.txt",
    )

    # Streamed: on the final line (done), after the text.
    lists_the_folder(provider, folder, "notes.txt")
    parts = list(client.chat(model="scripted", messages=[question], stream=True))
    assert parts[-1].done
    assert [c.function.name for c in parts[-1].message.tool_calls or []] == [
        "filesystem:list_directory"
    ]
    assert not any(p.message.tool_calls for p in parts[:-1])


def test_a_message_sent_back_does_not_ask_the_model_to_run_them_again(
    base_url: str, provider: ScriptedProvider, folder: Path
) -> None:
    lists_the_folder(provider, folder, "There is notes.txt.")
    client = ollama.Client(host=base_url)
    messages: list[Any] = [{"role": "user", "content": "List the files"}]
    response = client.chat(model="scripted", messages=messages)
    assert response.message.tool_calls  # the SDK keeps the calls but drops `executed`

    def sees_the_answer_not_an_open_call(
        history: Sequence[Message], _: Sequence[ToolDefinition]
    ) -> None:
        assert [m.role for m in history] == ["user", "assistant", "user"]
        assert history[1] == Message("assistant", "There is notes.txt.")

    provider.add(Step.text("It holds milk and eggs.", expect=sees_the_answer_not_an_open_call))
    messages += [response.message, {"role": "user", "content": "What is in it?"}]
    follow_up = client.chat(model="scripted", messages=messages)
    assert follow_up.message.content == "It holds milk and eggs."
    assert not follow_up.message.tool_calls  # nothing ran this time, so nothing is listed


def test_a_client_with_tools_of_its_own_is_only_asked_for_its_calls(
    base_url: str, provider: ScriptedProvider, folder: Path
) -> None:
    """Ollama's SDK loop: run every call in `tool_calls`, send the results, ask again. The
    MCP calls that already ran must not enter it."""
    lists_the_folder(provider, folder, "There is notes.txt.")
    client = ollama.Client(host=base_url)
    messages: list[Any] = [{"role": "user", "content": "List the files"}]
    asked = 0
    while True:
        asked += 1
        response = client.chat(model="scripted", messages=messages, tools=[WEATHER_TOOL])
        messages.append(response.message)
        if not response.message.tool_calls:
            break
        for call in response.message.tool_calls:  # a client runs what it is asked to
            messages.append({"role": "tool", "content": "ran", "tool_name": call.function.name})
    assert asked == 1
    assert response.message.content == "There is notes.txt."

    # Its own call still comes back to it, alone.
    provider.add(
        Step.calls(ToolCall("mcp_discover", {"pattern": "*list_directory*"})),
        Step.calls(ToolCall("filesystem:list_directory", {"path": str(folder)})),
        Step.calls(ToolCall("get_weather", {"city": "Oslo"})),
    )
    response = client.chat(model="scripted", messages=messages, tools=[WEATHER_TOOL])
    assert [c.function.name for c in response.message.tool_calls or []] == ["get_weather"]


def test_a_bad_executed_mark_is_a_400(base_url: str) -> None:
    call = {"function": {"name": "filesystem:list_directory", "arguments": {}}, "executed": 1}
    body = {
        "model": "scripted",
        "stream": False,
        "messages": [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": "", "tool_calls": [call]},
        ],
    }
    response = httpx.post(f"{base_url}/api/chat", json=body)
    assert response.status_code == 400
    assert "executed" in response.json()["error"]
