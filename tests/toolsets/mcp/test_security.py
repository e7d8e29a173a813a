"""Process security: allowlisted environment, refused commands and arguments, own group."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from tests.support.real_servers import faults

from farmhand.config.models import McpServerConfig
from farmhand.errors import ConfigError
from farmhand.toolsets.mcp.client import MCPToolset
from farmhand.toolsets.mcp.security import server_environment, validate_command
from farmhand.toolsets.mcp.transports import server_target


def server(command: str, *args: str, allow: bool = False) -> McpServerConfig:
    return McpServerConfig(name="s", command=command, args=list(args), allow_unsafe_command=allow)


def test_environment_is_the_allowlist_plus_exactly_the_configured_env() -> None:
    parent = {
        "PATH": "/bin",
        "HOME": "/home/u",
        "LANG": "C.UTF-8",
        "LC_ALL": "C",
        "OPENAI_API_KEY": "sk-secret",
        "AWS_SECRET_ACCESS_KEY": "x",
        "BASH_FUNC_f%%": "() { :; }",
    }
    env = server_environment({"GITHUB_TOKEN": "ghp", "LANG": "de_DE.UTF-8"}, parent)
    assert env == {
        "PATH": "/bin",
        "HOME": "/home/u",
        "LANG": "de_DE.UTF-8",  # the config wins
        "LC_ALL": "C",
        "GITHUB_TOKEN": "ghp",
    }


def test_a_configured_variable_passes_even_if_it_looks_secret() -> None:
    env = server_environment({"OPENAI_API_KEY": "sk-mine"}, {"OPENAI_API_KEY": "sk-parent"})
    assert env == {"OPENAI_API_KEY": "sk-mine"}


@pytest.mark.anyio
async def test_the_server_sees_no_secret_from_farmhands_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("FARMHAND_TEST_SECRET", "leaked")
    monkeypatch.setenv("LC_TEST_LOCALE", "kept")
    async with MCPToolset.from_config(faults(env={"GIVEN": "yes"})) as toolset:
        assert (await toolset.call_tool("env", {"name": "FARMHAND_TEST_SECRET"})).text == "<unset>"
        assert (await toolset.call_tool("env", {"name": "GIVEN"})).text == "yes"
        assert (await toolset.call_tool("env", {"name": "LC_TEST_LOCALE"})).text == "kept"
        assert (await toolset.call_tool("env", {"name": "PATH"})).text == os.environ["PATH"]


@pytest.mark.anyio
async def test_the_server_runs_in_its_own_process_group() -> None:
    async with MCPToolset.from_config(faults()) as toolset:
        pid = int((await toolset.call_tool("pid", {})).text)
        # Led by the reaper that started it (its parent), not by farmhand.
        parent = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
        assert os.getpgid(pid) == parent != os.getpgid(0)


@pytest.mark.parametrize(
    ("command", "what"),
    [
        ("bash", "a shell"),
        ("/bin/sh", "a shell"),
        ("zsh", "a shell"),
        ("sudo", "privilege escalation"),
        ("su", "privilege escalation"),
        ("rm", "destroys data"),
        ("dd", "destroys data"),
        ("curl", "raw network tool"),
        ("wget", "raw network tool"),
        ("nc", "raw network tool"),
    ],
)
def test_unsafe_commands_are_refused_with_the_way_to_allow_them(command: str, what: str) -> None:
    with pytest.raises(ConfigError) as caught:
        validate_command(server(command, "-c", "echo hi"))
    message = str(caught.value)
    assert f"refusing to run {command!r}" in message and what in message
    assert "allow_unsafe_command: true" in message


def test_a_link_to_a_shell_is_a_shell(tmp_path: Path) -> None:
    link = tmp_path / "innocent-server"
    link.symlink_to("/bin/bash")
    with pytest.raises(ConfigError, match="a shell"):
        validate_command(server(str(link)))


def test_allow_unsafe_command_lets_it_through() -> None:
    validate_command(server("bash", "-c", "exec my-server", allow=True))


def test_refused_before_anything_starts() -> None:
    with pytest.raises(ConfigError, match="refusing to run 'bash'"):
        MCPToolset.from_config(server("bash", "-c", "true"))


def test_messages_show_a_server_url_without_its_credentials() -> None:
    server = McpServerConfig(
        name="remote", transport="http", base_url="https://me:pw@mcp.example.com:8443/mcp?key=k"
    )
    assert server_target(server).describe == "HTTP https://mcp.example.com:8443/mcp"
