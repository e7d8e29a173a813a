"""The llama_* tools on `farmhand serve`'s /mcp when the config has `llama_server:`: both
servers real uvicorns on loopback (farmhand's app, and FakeLlamaServer standing in for
llama-server: the real one is in tests/e2e), reached by the real MCP client over HTTP."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mcp import Client
from tests.support.fake_llama_server import FakeLlamaServer
from tests.support.live import LiveServer

from farmhand.assembly import create_app
from farmhand.config.loader import load_config
from farmhand.errors import ConfigError

pytestmark = pytest.mark.anyio


def _config(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "farmhand.yaml"
    path.write_text(text)
    return path


async def test_llama_tools_join_farmhands_own_on_mcp(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LLAMA_KEY", "sesame")
    fake = FakeLlamaServer(api_key="sesame")
    with LiveServer(fake.app) as llama:
        text = f"llama_server:\n  url: {llama.url}\n  api_key: ${{env:LLAMA_KEY}}\n"
        app = create_app(load_config(_config(tmp_path, text)), home=tmp_path, api_keys=())
        with LiveServer(app) as farmhand:
            async with Client(farmhand.url + "/mcp") as client:
                names = {tool.name for tool in (await client.list_tools()).tools}
                assert {"llama_health", "llama_start", "chat_completions", "list_projects"} <= names
                health = await client.call_tool("llama_health", {})
                assert not health.is_error, health.content
                body = json.loads(health.content[0].text)  # type: ignore[union-attr]
                assert body == {
                    "status": "ok",
                    "url": llama.url,
                    "slots_idle": 2,
                    "slots_processing": 1,
                }


async def test_without_the_section_there_are_no_llama_tools(tmp_path: Path) -> None:
    app = create_app(load_config(_config(tmp_path, "version: v1\n")), home=tmp_path, api_keys=())
    with LiveServer(app) as farmhand:
        async with Client(farmhand.url + "/mcp") as client:
            names = {tool.name for tool in (await client.list_tools()).tools}
    assert "chat_completions" in names
    assert not any(name.startswith("llama_") for name in names)


def test_a_bad_llama_server_section_names_the_line(tmp_path: Path) -> None:
    path = _config(tmp_path, "version: v1\nllama_server:\n  url: http://x\n  timout: 5\n")
    with pytest.raises(ConfigError, match=r"farmhand.yaml:4: llama_server.timout: unknown key"):
        load_config(path)


def test_a_llama_server_url_that_is_not_http_names_the_line(tmp_path: Path) -> None:
    path = _config(tmp_path, "llama_server:\n  url: localhost:8080\n")
    with pytest.raises(ConfigError, match=r"farmhand.yaml:2: llama_server.url: .*must start with"):
        load_config(path)
