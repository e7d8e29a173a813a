"""farmhand's MCP tools, called by the real MCP client in-process (`mcp.Client(server)`):
every tool, its JSON, and errors that come back as tool errors saying what to fix."""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from tests.support.live import PANTRY_SERVER, pantry_server, scripted_config

from farmhand.config.models import ModelConfig
from farmhand.mcpserver.farmhand_tools import build_server
from farmhand.messages import ToolCall
from farmhand.providers.base import Provider
from farmhand.providers.scripted import ScriptedProvider, Step
from farmhand.service.state import ServiceState
from farmhand.toolsets.mcp.pool import MCPPool

pytestmark = pytest.mark.anyio

TOOLS = {
    "list_projects",
    "create_project",
    "get_project",
    "update_project",
    "delete_project",
    "chat_completions",
    "list_models",
    "search_tools",
    "rag_query",
    "list_collections",
}

PANTRY = {"name": "pantry", "command": sys.executable, "args": [str(PANTRY_SERVER)]}
HELPER = {
    "name": "helper",
    "provider": "openai",
    "model": "scripted",
    "base_url": "http://127.0.0.1:9",
}
PROJECT_CONFIG: dict[str, Any] = {"mcp": {"servers": [PANTRY]}, "runtime": {"models": [HELPER]}}


@dataclass
class Farm:
    client: Client
    script: ScriptedProvider
    home: Path
    built: list[str]

    async def call(self, tool: str, /, **arguments: Any) -> Any:
        result = await self.client.call_tool(tool, arguments)
        assert not result.is_error, result.content
        return json.loads(result.content[0].text)  # type: ignore[union-attr]

    async def error(self, tool: str, /, **arguments: Any) -> str:
        result = await self.client.call_tool(tool, arguments)
        assert result.is_error
        text: str = result.content[0].text  # type: ignore[union-attr]
        return text


@asynccontextmanager
async def farm(home: Path) -> AsyncIterator[Farm]:
    script = ScriptedProvider()
    built: list[str] = []

    def factory(model: ModelConfig) -> Provider:
        built.append(model.name)
        return script

    state = ServiceState(
        config=scripted_config(pantry_server(), request_dirs=[home]),
        home=home,
        pool=MCPPool(),
        provider_factory=factory,
    )
    try:
        async with state.pool, Client(build_server(lambda: state)) as client:
            yield Farm(client, script, home, built)
    finally:
        await state.aclose()
    script.assert_done()


async def test_lists_the_tools_llamafarm_names(tmp_path: Path) -> None:
    async with farm(tmp_path) as f:
        tools = {t.name: t for t in (await f.client.list_tools()).tools}
    assert set(tools) == TOOLS
    assert all(t.description for t in tools.values())
    create = tools["create_project"].input_schema
    assert create["required"] == ["name"]
    assert "namespace" in create["properties"]


async def test_project_tools_create_list_get_update_delete(tmp_path: Path) -> None:
    async with farm(tmp_path) as f:
        created = await f.call("create_project", name="alpha")
        assert created["project"]["config"] == {
            "version": "v1", "name": "alpha", "namespace": "default"
        }  # fmt: skip
        listed = await f.call("list_projects")
        assert (listed["total"], listed["projects"][0]["name"]) == (1, "alpha")
        updated = await f.call("update_project", name="alpha", config=PROJECT_CONFIG)
        assert updated["project"]["config"]["runtime"]["models"][0]["name"] == "helper"
        got = await f.call("get_project", name="alpha", namespace="default")
        assert got == updated
        yaml_text = "version: v1\n# barn notes\n"
        await f.call("create_project", name="hay", namespace="barn", config=yaml_text)
        assert (await f.call("list_projects", namespace="barn"))["total"] == 1
        deleted = await f.call("delete_project", name="alpha")
        assert deleted["project"]["name"] == "alpha"
        assert (await f.call("list_projects"))["total"] == 0
    assert (tmp_path / "projects" / "barn" / "hay" / "farmhand.yaml").is_file()


async def test_project_errors_are_tool_errors_that_say_what_to_fix(tmp_path: Path) -> None:
    async with farm(tmp_path) as f:
        assert "does not exist" in await f.error("get_project", name="nope")
        assert "does not exist" in await f.error("delete_project", name="nope")
        assert "invalid project name" in await f.error("create_project", name="a/b")
        bad = await f.error("create_project", name="x", config={"runtime": {"modles": []}})
        assert "default/x/farmhand.yaml:" in bad
        assert "unknown key 'modles' (did you mean 'models'?)" in bad
        await f.call("create_project", name="x")
        taken = await f.error("create_project", name="x")
        # One shape for every tool's failure, as ToolServer writes it.
        assert taken.startswith("Error: ") and "already exists" in taken
        shell = {"name": "s", "command": "sh", "allow_unsafe_command": True}
        unsafe = {"mcp": {"servers": [shell]}}
        assert "allow_unsafe_command" in await f.error("update_project", name="x", config=unsafe)
        # Arguments the schema refuses are tool errors too, not crashes.
        result = await f.client.call_tool("create_project", {"namespace": "default"})
        assert result.is_error


async def test_chat_completions_runs_the_tool_loop(tmp_path: Path) -> None:
    async with farm(tmp_path) as f:
        f.script.add(
            Step.calls(ToolCall("pantry:echo", {"text": "jam"})),
            Step.text("The pantry has jam."),
        )
        reply = await f.call(
            "chat_completions", messages="what is in the pantry?", include_tool_results=True
        )
        assert reply["object"] == "chat.completion"
        assert reply["model"] == "farm"
        assert reply["choices"][0]["message"]["content"] == "The pantry has jam."
        assert reply["choices"][0]["finish_reason"] == "stop"
        assert [r["content"] for r in reply["tool_results"]] == ["jam"]
        first = f.script.requests[0].messages
        assert [(m.role, m.content) for m in first] == [("user", "what is in the pantry?")]


async def test_chat_completions_with_a_project_uses_its_models(tmp_path: Path) -> None:
    async with farm(tmp_path) as f:
        await f.call("create_project", name="kitchen", config=PROJECT_CONFIG)
        f.script.add(Step.text("Hello from the kitchen."))
        reply = await f.call(
            "chat_completions",
            messages=[{"role": "system", "content": "Hi."}, {"role": "user", "content": "hi"}],
            project="kitchen",
            namespace="default",
        )
        assert reply["model"] == "helper"
        assert f.built == ["helper"]
        assert "unknown model 'nope'" in await f.error(
            "chat_completions", messages="hi", model="nope"
        )
        assert "messages" in await f.error("chat_completions", messages=[{"role": "wizard"}])
        assert "does not exist" in await f.error("chat_completions", messages="hi", project="nope")


async def test_list_models_and_search_tools(tmp_path: Path) -> None:
    async with farm(tmp_path) as f:
        models = await f.call("list_models")
        assert models["object"] == "list"
        assert [(m["id"], m["default"]) for m in models["data"]] == [("farm", True)]
        await f.call("create_project", name="kitchen", config=PROJECT_CONFIG)
        project_models = await f.call("list_models", project="kitchen")
        assert [m["id"] for m in project_models["data"]] == ["helper"]

        found = await f.call("search_tools", pattern="echo")
        assert found["pattern"] == "echo"
        assert found["tools"][0]["name"] == "pantry:echo"
        assert found["tools"][0]["server"] == "pantry"
        everything = await f.call("search_tools")
        assert {t["name"] for t in everything["tools"]} == {
            "pantry:pid", "pantry:echo", "pantry:env"
        }  # fmt: skip
        assert everything["total"] == 3


async def test_search_tools_refuses_a_pattern_past_the_bounds(tmp_path: Path) -> None:
    async with farm(tmp_path) as f:
        too_long = await f.error("search_tools", pattern="*a" * 400)
        assert "pattern is 800 characters long" in too_long
        assert "server.limits.max_search_pattern_chars" in too_long
        too_wild = await f.error("search_tools", pattern="?" * 17)
        assert "server.limits.max_search_wildcards" in too_wild
