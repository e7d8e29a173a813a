"""`import farmhand` as a program uses it: a Runtime opened from a config file, chats with a
Python function, a folder and an MCP server as tools, a stream of events, eval. The model
is a scripted OpenAI-compatible backend on a real socket (what a config's `provider:
openai` reaches); the MCP servers are real ones."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from tests.support.live import pantry_server
from tests.support.scripted_backend import (
    ScriptedBackend,
    answer_with_result,
    call,
    model_config,
    say,
)

import farmhand

pytestmark = pytest.mark.anyio

RULES = "Answer in one line."


def write_config(folder: Path, backend_url: str) -> Path:
    config = {
        "version": "v1",
        "prompts": [{"name": "default", "messages": [{"role": "system", "content": RULES}]}],
        "runtime": {"models": [model_config(backend_url)]},
    }
    path = folder / "farmhand.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


def shipping_days(country: str, express: bool = False) -> int:
    """How many days a parcel takes to reach `country` (an ISO code)."""
    return 1 if express else {"NO": 2}.get(country, 5)


def offered(request: dict[str, Any]) -> list[str]:
    return [t["function"]["name"] for t in request.get("tools", [])]


async def test_a_question_with_a_python_function_as_a_tool(tmp_path: Path) -> None:
    turns = [call("shipping_days", {"country": "NO"}), answer_with_result("Days: ")]
    with ScriptedBackend(turns) as backend:
        async with farmhand.Runtime(write_config(tmp_path, backend.url)) as rt:
            answer = await rt.chat("How long to Norway?", tools=[shipping_days])
    assert str(answer) == answer.text == "Days: 2"
    assert [r.call.name for r in answer.tool_calls] == ["shipping_days"]
    assert answer.tool_calls[0].result.content == "2"
    first = backend.requests[0]
    assert offered(first) == ["shipping_days"]
    schema = first["tools"][0]["function"]
    assert schema["description"].startswith("How many days a parcel takes")
    assert schema["parameters"]["required"] == ["country"]
    assert first["messages"][0] == {"role": "system", "content": RULES}  # the config's prompt
    # The conversation goes on from the answer's messages.
    assert [m.role for m in answer.messages] == ["system", "user", "assistant", "tool", "assistant"]


async def test_functions_keep_the_round_limits_own_rule(tmp_path: Path) -> None:
    # `ChatRequest.toolsets` carries both these functions and the Responses API's `mcp`
    # tools; only the latter make the turn after the last round go without tools.
    turns = [call("shipping_days", {"country": "NO"}), answer_with_result("Days: ")]
    with ScriptedBackend(turns) as backend:
        async with farmhand.Runtime(write_config(tmp_path, backend.url)) as rt:
            answer = await rt.chat("How long to Norway?", tools=[shipping_days], max_tool_rounds=1)
    assert answer.text == "Days: 2"
    assert [offered(r) for r in backend.requests] == [["shipping_days"], ["shipping_days"]]


async def test_a_function_called_wrongly_or_failing_is_an_error_the_model_reads(
    tmp_path: Path,
) -> None:
    def refund(order: int) -> str:
        """Refund an order."""
        raise LookupError(f"no order {order}")

    turns = [
        call("shipping_days", {"express": "maybe"}),
        answer_with_result(),
        call("refund", {"order": 7}),
        answer_with_result(),
    ]
    with ScriptedBackend(turns) as backend:
        async with farmhand.Runtime(write_config(tmp_path, backend.url)) as rt:
            wrong = await rt.chat("How long?", tools=[shipping_days, refund])
            failed = await rt.chat("Refund 7", tools=[shipping_days, refund])
    result = wrong.tool_calls[0].result
    assert result.is_error
    # Checked against the signature's schema before the function runs.
    assert "invalid arguments for shipping_days" in result.content
    assert "arguments.country: missing required" in result.content
    assert 'arguments.express: expected boolean, got string "maybe"' in result.content
    assert failed.tool_calls[0].result.is_error
    assert failed.text == "The tool said: refund failed: LookupError: no order 7"


async def test_a_folder_as_tools_is_read_only_and_relative_to_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))  # no user definitions
    (tmp_path / "xdg").mkdir()
    monkeypatch.delenv("FARMHAND_MCP_SERVERS", raising=False)
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "barn.txt").write_text("The red barn needs paint.", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    turns = [call("filesystem:read_text_file", {"path": "notes/barn.txt"}), answer_with_result()]
    with ScriptedBackend(turns) as backend:
        async with farmhand.Runtime(write_config(tmp_path, backend.url)) as rt:
            answer = await rt.chat("What does the barn need?", tools=["notes", tmp_path / "xdg"])
    assert answer.text == "The tool said: The red barn needs paint."
    names = offered(backend.requests[0])
    assert "filesystem__read_text_file" in names  # as the OpenAI wire spells it
    assert "filesystem__write_file" not in names  # a folder given as tools is read-only
    assert "filesystem_2__read_text_file" in names  # the second folder's server, renamed


async def test_an_mcp_server_as_tools_and_the_events_as_they_happen(tmp_path: Path) -> None:
    server = farmhand.McpServer(**pantry_server().model_dump(exclude_defaults=True))
    turns = [call("pantry:echo", {"text": "moo"}), say("The cow said moo.")]
    with ScriptedBackend(turns) as backend:
        async with farmhand.Runtime(write_config(tmp_path, backend.url)) as rt:
            stream = rt.stream("What does the cow say?", tools=[server])
            seen = [event async for event in stream]  # read to its end
    kinds = [type(e).__name__ for e in seen]
    assert kinds[0] == "TurnStarted"
    assert "ToolCallStarted" in kinds and "ToolCallFinished" in kinds
    finished = seen[-1]
    assert isinstance(finished, farmhand.LoopFinished)
    assert finished.answer == "The cow said moo."
    assert "".join(e.text for e in seen if isinstance(e, farmhand.TextChunk)) == finished.answer
    calls = [e for e in seen if isinstance(e, farmhand.ToolCallFinished)]
    assert calls[0].result.content == "moo"


async def test_eval_scores_the_runtimes_model(tmp_path: Path) -> None:
    turns = [call("get_weather", {"city": "Paris"})]
    with ScriptedBackend(turns) as backend:
        async with farmhand.Runtime(write_config(tmp_path, backend.url)) as rt:
            summary = await rt.eval("builtin", categories=["single"], limit=1)
    assert isinstance(summary, farmhand.TargetSummary)
    assert [(r.case_id, r.passed) for r in summary.results] == [("single-weather", True)]
    assert summary.mean_accuracy == 1.0


async def test_mistakes_say_what_to_fix(tmp_path: Path) -> None:
    with ScriptedBackend([]) as backend:
        runtime = farmhand.Runtime(write_config(tmp_path, backend.url))
        with pytest.raises(RuntimeError, match=r"async with farmhand\.Runtime"):
            await runtime.chat("hi")
        async with runtime as rt:
            with pytest.raises(farmhand.ConfigError, match="tools: nowhere: no such file"):
                await rt.chat("hi", tools=["nowhere"])
            with pytest.raises(farmhand.ConfigError, match="needs a name"):
                await rt.chat("hi", tools=[lambda: 1])
            with pytest.raises(farmhand.ConfigError, match="is not a path, an McpServer"):
                await rt.chat("hi", tools=[json.dumps({}).encode()])  # type: ignore[list-item]
            with pytest.raises(farmhand.FarmhandError, match="unknown model 'gpt-17'"):
                await rt.chat("hi", model="gpt-17")
    assert backend.requests == []  # nothing reached the model


def test_the_package_offers_what_its_all_names_and_nothing_loads_before_use() -> None:
    for name in farmhand.__all__:
        assert getattr(farmhand, name) is not None
    assert dir(farmhand) == sorted(farmhand.__all__)
    assert farmhand.__doc__ and "async with farmhand.Runtime() as rt" in farmhand.__doc__
    with pytest.raises(AttributeError, match="no attribute 'internals'"):
        farmhand.internals  # noqa: B018


async def test_an_error_leaving_the_block_is_itself_not_an_exception_group(tmp_path: Path) -> None:
    runtime = farmhand.Runtime(write_config(tmp_path, "http://127.0.0.1:9/v1"))
    with pytest.raises(farmhand.ConfigError, match="no such file"):
        async with runtime as rt:
            await rt.chat("hi", tools=["nowhere"])
