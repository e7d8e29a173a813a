"""The request policy's rules, one by one: what a server or folder from a request may be."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

from farmhand.config.models import McpServerConfig, ServerConfig
from farmhand.errors import ConfigError, PolicyError, RequestError
from farmhand.toolsets.mcp.definitions import BUILTIN_DEFINITIONS
from farmhand.toolsets.mcp.policy import KnownServers, RequestPolicy, known_servers

PYTHON = sys.executable


def stdio(command: str, *args: str, env: dict[str, str] | None = None) -> McpServerConfig:
    return McpServerConfig(name="s", command=command, args=list(args), env=env or {})


def url(base_url: str) -> McpServerConfig:
    return McpServerConfig(name="u", transport="http", base_url=base_url)


def policy(tmp_path: Path | None = None, **rules: object) -> RequestPolicy:
    server = {"request_servers": rules, "allowed_dirs": [str(tmp_path)] if tmp_path else []}
    return RequestPolicy.from_config(ServerConfig.model_validate(server))


def test_by_default_no_request_starts_a_program_or_reaches_a_host() -> None:
    default = RequestPolicy.from_config(ServerConfig())
    with pytest.raises(PolicyError, match=r"server\.request_servers\.stdio"):
        default.admit(stdio("mcp-server-time"))
    with pytest.raises(PolicyError, match="http_hosts: none"):
        default.admit(url("http://10.0.0.5:8080/mcp"))
    with pytest.raises(PolicyError, match=r"server\.allowed_dirs"):
        default.admit_dir("/tmp")


def test_only_listed_launchers_run_and_links_do_not_fool_it(tmp_path: Path) -> None:
    rules = policy(tmp_path, stdio=True, launchers=[PYTHON])
    rules.admit(stdio(PYTHON, "-m", "mcp_server_time"))
    for launcher in ["env", "/usr/bin/env", "timeout", "nice", "nohup", "setsid", "bash"]:
        with pytest.raises((PolicyError, ConfigError)):
            rules.admit(stdio(launcher, "bash", "-c", "touch pwned"))
    disguised = tmp_path / "python3"  # a link named like the launcher, to something else
    os.symlink(shutil.which("env") or "/usr/bin/env", disguised)
    with pytest.raises(PolicyError, match="not a launcher"):
        rules.admit(stdio(str(disguised), "bash"))


@pytest.mark.parametrize(
    "args",
    [
        ["-c", "import os"],
        ["-Bc", "import os"],
        ["-e", "require('child_process')"],
        ["--eval=1"],
        ["-pe", "1"],
        ["--require", "./x.js"],
        ["-i"],
    ],
)
def test_inline_code_flags_are_refused(args: list[str]) -> None:
    rules = policy(stdio=True, launchers=[PYTHON])
    with pytest.raises(PolicyError, match="run code written in the request"):
        rules.admit(stdio(PYTHON, *args))


def test_shell_metacharacters_are_refused() -> None:
    rules = policy(stdio=True, launchers=[PYTHON])
    for arg in ["a; rm -rf ~", "$(id)", "`id`", "x | nc host 1", "a && b", "> x"]:
        with pytest.raises(PolicyError, match="shell metacharacters"):
            rules.admit(stdio(PYTHON, "-m", "mod", arg))


def test_path_arguments_stay_inside_the_allowed_folders(tmp_path: Path) -> None:
    inside = tmp_path / "project"
    inside.mkdir()
    rules = policy(tmp_path, stdio=True, launchers=[PYTHON])
    rules.admit(stdio(PYTHON, str(inside), f"--root={inside}/sub"))
    for arg in ["/etc", f"{inside}/../../..", "--root=/", "x/../../../../etc"]:
        with pytest.raises(PolicyError, match="outside the folders"):
            rules.admit(stdio(PYTHON, arg))


def test_env_that_changes_how_programs_load_is_refused() -> None:
    rules = policy(stdio=True, launchers=[PYTHON], env=["REGION", "LD_PRELOAD"])
    rules.admit(stdio(PYTHON, env={"GITHUB_TOKEN": "t", "BRAVE_API_KEY": "k", "REGION": "eu"}))
    for name in ["LD_PRELOAD", "NODE_OPTIONS", "PYTHONPATH", "PYTHONSTARTUP", "PATH", "BASH_ENV"]:
        with pytest.raises(PolicyError, match="changes how programs load"):
            rules.admit(stdio(PYTHON, env={name: "x"}))
    with pytest.raises(PolicyError, match="only names ending in"):
        rules.admit(stdio(PYTHON, env={"OTHER": "x"}))


def test_url_servers_only_to_listed_hosts() -> None:
    rules = policy(http_hosts=["mcp.example.com", "*.tools.example", "localhost:9000"])
    rules.admit(url("https://mcp.example.com/mcp"))
    rules.admit(url("https://a.tools.example/mcp"))
    rules.admit(url("http://localhost:9000/mcp"))
    for refused in [
        "http://127.0.0.1:8080/mcp",
        "http://localhost:9001/mcp",
        "https://mcp.example.com.evil.example/mcp",
        "http://169.254.169.254/latest",
    ]:
        with pytest.raises(PolicyError, match="may not connect"):
            rules.admit(url(refused))


def test_folders_resolve_links_and_dots_before_the_check(tmp_path: Path) -> None:
    allowed = tmp_path / "allowed"
    (allowed / "docs").mkdir(parents=True)
    (allowed / "escape").symlink_to("/etc")
    rules = policy(allowed)
    assert rules.admit_dir(str(allowed / "docs")) == (allowed / "docs").resolve()
    for value in ["/", "/etc", str(allowed / "escape"), str(allowed / "docs/../../..")]:
        with pytest.raises(PolicyError, match="outside the folders"):
            rules.admit_dir(value)
    (allowed / "file.txt").write_text("x")
    with pytest.raises(ConfigError, match="not a folder"):
        rules.admit_dir(str(allowed / "file.txt"))


def test_a_request_may_name_the_operators_servers_and_is_bounded() -> None:
    mine = McpServerConfig(name="time", command="mcp-server-time")
    known = known_servers([mine], BUILTIN_DEFINITIONS)
    named, brought = RequestPolicy().admit_servers(["time"], known)
    assert named == [mine] and brought == []
    with pytest.raises(ConfigError, match="no server named 'nope'"):
        RequestPolicy().admit_servers(["nope"], known)
    with pytest.raises(ConfigError, match="send tools_path too"):
        RequestPolicy().admit_servers(["filesystem"], known)
    with pytest.raises(PolicyError, match="at most 2 per request"):
        RequestPolicy(max_servers=2).admit_servers(["time", "time", "time"], known)


def test_a_chats_servers_are_admitted_at_once_and_sorted_by_the_rules_each_runs_under() -> None:
    pantry = McpServerConfig(name="pantry", command="mcp-pantry")  # the model's own
    clock = McpServerConfig(name="clock", command="mcp-clock", trust_when_named=True)
    notes = McpServerConfig(name="notes", command="mcp-notes")
    mine = McpServerConfig(name="mine", command="my-server")  # a local face's user's
    reads: list[str] = []

    def known() -> KnownServers:
        reads.append("definitions")
        return known_servers([pantry, clock, notes], [])

    servers = RequestPolicy().admit_chat(
        [pantry], ["pantry", "clock", "notes"], known=known, own=[mine]
    )
    assert servers.trusted == [pantry, clock, mine]  # "pantry" named again: once
    assert servers.outside == [notes]  # the operator's, chosen by the request: its rules
    assert servers.folder == [] and servers.all == [pantry, clock, mine, notes]
    assert reads == ["definitions"]
    RequestPolicy().admit_chat([pantry], [], known=known)
    assert reads == ["definitions"]  # a request that names none reads no definitions


def test_a_chat_refuses_a_clash_and_holds_a_projects_servers_to_the_rules() -> None:
    pantry = McpServerConfig(name="pantry", command="mcp-pantry")
    with pytest.raises(RequestError, match="already a server of this model") as raised:
        RequestPolicy().admit_chat(
            [pantry], [McpServerConfig(name="pantry", command="other")], known=dict
        )
    assert raised.value.param == "mcp_servers"
    with pytest.raises(PolicyError, match=r"server\.request_servers\.stdio"):
        RequestPolicy().admit_chat([pantry], known=dict, configured_outside=True)


def test_a_missing_command_is_a_client_mistake() -> None:
    rules = policy(stdio=True, launchers=[PYTHON])
    with pytest.raises(ConfigError, match="was not found"):
        rules.admit(stdio("no-such-program-anywhere"))
