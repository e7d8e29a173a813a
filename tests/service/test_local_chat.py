"""A local face's chat on the service, as `farmhand chat` and `run` set it up
(`cli/service.py`: the config's model or the catalog's, a `ServiceState` with no memory
budget, `start_chat` then `run_chat`): the tools its user's own folder gives (the real
filesystem and git servers) under the config's runtime settings, and the model loading
while the servers start. Scripted model."""

from __future__ import annotations

import subprocess
from collections.abc import AsyncIterator
from contextlib import aclosing, asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from tests.support.live import scripted_config

from farmhand.cli.service import command_model
from farmhand.config.models import FarmhandConfig, McpServerConfig, default_config
from farmhand.errors import ConfigError, FarmhandError
from farmhand.messages import Message, ToolCall
from farmhand.providers.base import Provider
from farmhand.providers.scripted import ScriptedProvider, Step
from farmhand.runtime.events import LoopFinished
from farmhand.runtime.tool_paths import servers_for_path
from farmhand.service.chat import ChatRequest, chat_tools, run_chat, start_chat
from farmhand.service.loaded_models import unbounded_models
from farmhand.service.state import ServiceState
from farmhand.toolsets.mcp.discovery import DISCOVER
from farmhand.toolsets.mcp.known_servers import filesystem_server

pytestmark = pytest.mark.anyio


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("FARMHAND_HOME", str(tmp_path / "home"))
    papers = tmp_path / "papers"
    papers.mkdir()
    for i in range(60):
        (papers / f"report-{i:03d}.txt").write_text("x")
    return papers


def local_config(**runtime: Any) -> FarmhandConfig:
    """The scripted model `farm`, with these `runtime:` settings."""
    config = scripted_config()
    return config.model_copy(update={"runtime": config.runtime.model_copy(update=runtime)})


@asynccontextmanager
async def local_service(
    config: FarmhandConfig, home: Path, load: Any
) -> AsyncIterator[ServiceState]:
    """The state `cli/service.command_service` opens, its models built by `load`."""
    async with ServiceState.open(
        config, home, provider_factory=load, models=unbounded_models()
    ) as state:
        yield state


def folder_chat(folder: Path, text: str = "", **fields: Any) -> ChatRequest:
    """`farmhand chat --tools FOLDER TEXT`'s request."""
    return ChatRequest(
        model="farm",
        messages=[Message.user(text)] if text else [],
        folder_servers=[filesystem_server(folder)],
        **fields,
    )


async def finish(state: ServiceState, request: ChatRequest) -> LoopFinished:
    async with aclosing(run_chat(state, request)) as events:
        async for event in events:
            if isinstance(event, LoopFinished):
                return event
    raise AssertionError("the chat ended without LoopFinished")


async def test_a_jit_chat_discovers_lists_and_caps_the_result(folder: Path) -> None:
    provider = ScriptedProvider(
        [
            Step.calls(ToolCall(DISCOVER, {"pattern": "*list*"})),
            Step.calls(ToolCall("filesystem:list_directory", {"path": str(folder)})),
            Step.text("60 reports"),
        ]
    )
    config = local_config(max_tool_result_chars=300)
    request = folder_chat(folder, "list the reports", jit_tools=True, jit_max_tools=2)
    async with local_service(config, folder.parent, lambda _: provider) as state:
        assert [t.name for t in await chat_tools(state, request)] == [DISCOVER]
        result = await finish(state, request)
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


async def test_an_eager_chat_offers_every_read_only_tool_up_front(folder: Path) -> None:
    config = local_config(jit_tools=False)
    async with local_service(config, folder.parent, lambda _: ScriptedProvider()) as state:
        names = [t.name for t in await chat_tools(state, folder_chat(folder))]
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
    request = ChatRequest(  # as `farmhand run --tools PATH` builds it
        model="farm",
        messages=[],
        own_servers=[s for s in found.servers if s.name not in found.folder_servers],
        folder_servers=[s for s in found.servers if s.name in found.folder_servers],
    )
    async with local_service(local_config(), tmp_path, lambda _: ScriptedProvider()) as state:
        names = {t.name for t in await chat_tools(state, request)}
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

    def load(_: object) -> Provider:
        # Runs in a worker thread while the filesystem server starts; fails like a model
        # file that cannot be read.
        started.append(True)
        raise ConfigError("model file is not a GGUF")

    async with local_service(local_config(), folder.parent, load) as state:
        with pytest.raises(ConfigError, match="not a GGUF"):  # itself, not an exception group
            await start_chat(state, folder_chat(folder))
    assert started == [True]

    provider = ClosingProvider([])
    broken = McpServerConfig(name="broken", command="/nonexistent/server")
    request = ChatRequest(model="farm", messages=[Message.user("hi")], own_servers=[broken])
    async with local_service(local_config(), folder.parent, lambda _: provider) as state:
        await start_chat(state, request)  # the model loaded; the chat says what failed
        with pytest.raises(FarmhandError, match="command not found"):
            await finish(state, request)
    assert provider.closed  # the model that loaded meanwhile is let go


def test_a_command_runs_a_catalog_model_the_config_does_not_list() -> None:
    # `farmhand chat -m qwen2.5-coder:0.5b` with no config: the README's example.
    model = command_model(default_config(), "qwen2.5-coder:0.5b")
    assert (model.provider, model.model) == ("llamacpp", "qwen2.5-coder:0.5b")
    with pytest.raises(ConfigError, match=r"qwen2\.5-coder:1\.5b"):  # the catalog is listed
        command_model(default_config(), "gpt-4")
