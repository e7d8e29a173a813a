"""ChatSession's tool wiring from the runtime settings, with the real filesystem server."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from farmhand.config.models import McpServerConfig, ModelConfig, default_config
from farmhand.errors import ConfigError, FarmhandError
from farmhand.messages import ToolCall
from farmhand.providers.scripted import ScriptedProvider, Step
from farmhand.runtime.loop import run_to_completion
from farmhand.runtime.session import ChatSession, ToolSettings, session_for
from farmhand.runtime.tool_paths import servers_for_path
from farmhand.toolsets.mcp.discovery import DISCOVER
from farmhand.toolsets.mcp.known_servers import filesystem_server

pytestmark = pytest.mark.anyio

MODEL = ModelConfig(name="scripted", provider="openai", model="scripted")


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("FARMHAND_HOME", str(tmp_path / "home"))
    papers = tmp_path / "papers"
    papers.mkdir()
    for i in range(60):
        (papers / f"report-{i:03d}.txt").write_text("x")
    return papers


async def test_jit_session_discovers_lists_and_caps_the_result(folder: Path) -> None:
    provider = ScriptedProvider(
        [
            Step.calls(ToolCall(DISCOVER, {"pattern": "*list*"})),
            Step.calls(ToolCall("filesystem:list_directory", {"path": str(folder)})),
            Step.text("60 reports"),
        ]
    )
    session = ChatSession(
        load_provider=lambda: provider,
        servers=[filesystem_server(folder)],
        model=MODEL,
        folder_servers=frozenset({"filesystem"}),
        tools=ToolSettings(jit_tools=True, jit_max_tools=2, max_tool_result_chars=300),
    )
    async with session:
        assert [t.name for t in await session.router.list_tools()] == [DISCOVER]
        result = await run_to_completion(
            provider, session.opening("list the reports"), session.router
        )
    provider.assert_done()
    assert [t.name for t in provider.requests[1].tools] == [
        DISCOVER,
        "filesystem:list_directory",
        "filesystem:list_directory_with_sizes",
    ]
    listing = result.tool_calls[1].result.content
    assert listing.count("[FILE] report-") == 60  # the caller gets all of it
    seen = [m.content for m in result.messages if m.role == "tool"][1]
    assert len(seen) <= 300 and "characters cut here" in seen
    assert "[FILE] report-000.txt" in seen and "[FILE] report-059.txt" in seen


async def test_eager_session_offers_every_read_only_tool_up_front(folder: Path) -> None:
    provider = ScriptedProvider([Step.text("hi")])
    session = ChatSession(
        load_provider=lambda: provider,
        servers=[filesystem_server(folder)],
        model=MODEL,
        folder_servers=frozenset({"filesystem"}),
        tools=ToolSettings(jit_tools=False),
    )
    async with session:
        names = [t.name for t in await session.router.list_tools()]
    assert "filesystem:list_directory" in names
    assert DISCOVER not in names
    assert "filesystem:write_file" not in names  # --tools folders are read-only


async def test_a_git_folder_gives_the_model_read_only_git_tools_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.delenv("FARMHAND_MCP_SERVERS", raising=False)
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    found = servers_for_path(tmp_path)
    assert found.folder_servers == {"filesystem", "git"}
    session = ChatSession(
        load_provider=lambda: ScriptedProvider([]),
        servers=found.servers,
        model=MODEL,
        folder_servers=found.folder_servers,
    )
    async with session:
        names = {t.name for t in await session.router.list_tools()}
    assert {"git:git_status", "git:git_log", "filesystem:list_directory"} <= names
    assert not {"git:git_commit", "git:git_reset", "filesystem:write_file"} & names


class ClosingProvider(ScriptedProvider):
    """A provider that notes being closed."""

    closed = False

    async def aclose(self) -> None:
        self.closed = True


async def test_the_model_loads_while_the_servers_start_and_a_failure_closes_both(
    folder: Path,
) -> None:
    started: list[bool] = []

    def load() -> ScriptedProvider:
        # Runs in a worker thread while the filesystem server starts; fails like a model
        # file that cannot be read.
        started.append(True)
        raise ConfigError("model file is not a GGUF")

    session = ChatSession(load_provider=load, servers=[filesystem_server(folder)], model=MODEL)
    with pytest.raises(ConfigError, match="not a GGUF"):  # itself, not an exception group
        async with session:
            pass
    assert started == [True]

    provider = ClosingProvider([])
    broken = McpServerConfig(name="broken", command="/nonexistent/server")
    session = ChatSession(load_provider=lambda: provider, servers=[broken], model=MODEL)
    with pytest.raises(FarmhandError, match="command not found"):
        async with session:
            pass
    assert provider.closed  # the model that loaded meanwhile is let go


def test_the_cli_session_runs_a_catalog_model_the_config_does_not_list() -> None:
    # `farmhand chat -m qwen2.5-coder:0.5b` with no config: the README's example.
    session = session_for(default_config(), "qwen2.5-coder:0.5b")
    assert (session.model.provider, session.model.model) == ("llamacpp", "qwen2.5-coder:0.5b")
    with pytest.raises(ConfigError, match=r"qwen2\.5-coder:1\.5b"):  # the catalog is listed
        session_for(default_config(), "gpt-4")
