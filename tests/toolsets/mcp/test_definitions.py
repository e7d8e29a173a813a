"""MCP server definitions: reading them, and which servers `--tools PATH` turns on."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from farmhand.errors import ConfigError
from farmhand.toolsets.mcp.definitions import (
    ENV_VAR,
    auto_enabled,
    load_definitions,
    parse_definitions,
)


@pytest.fixture(autouse=True)
def no_user_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The developer's own ~/.config/farmhand/mcp-servers.json must not leak in."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))


def names(definitions_env: dict[str, str], path: Path | None) -> list[str]:
    configs, _ = auto_enabled(path, load_definitions(definitions_env), definitions_env)
    return [c.name for c in configs]


def test_the_builtin_filesystem_server_is_on_for_any_path(tmp_path: Path) -> None:
    configs, skipped = auto_enabled(tmp_path, load_definitions({}), {})
    [filesystem] = configs
    assert filesystem.name == "filesystem"
    assert filesystem.command is not None and filesystem.command.endswith("mcp-server-filesystem")
    assert filesystem.args == [str(tmp_path.resolve())]
    assert skipped == []


def test_git_is_on_only_where_the_path_has_a_git_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / ".git").mkdir()
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "mcp-server-git"
    fake.write_text("#!/bin/sh\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    configs, _ = auto_enabled(tmp_path, load_definitions({}), {})
    git = next(c for c in configs if c.name == "git")
    assert git.args == ["--repository", str(tmp_path.resolve())]
    assert names({}, tmp_path / "bin") == ["filesystem"]  # no .git there


def test_a_missing_git_server_is_skipped_with_how_to_install_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / ".git").mkdir()
    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.setattr("sys.executable", "/nonexistent/python")  # not beside farmhand either
    configs, skipped = auto_enabled(tmp_path, load_definitions({}), {})
    assert [c.name for c in configs] == ["filesystem"]
    [note] = skipped
    assert "'mcp-server-git' is not installed" in note
    assert "pip install mcp-server-git" in note


def test_no_path_enables_only_servers_that_need_none() -> None:
    env = {
        ENV_VAR: json.dumps(
            {
                "servers": [
                    {"name": "clock", "command": "true", "auto_enable": "always"},
                    {"name": "manual", "command": "true"},
                ]
            }
        )
    }
    assert names(env, None) == ["clock"]


def test_env_set_and_file_exists_conditions(tmp_path: Path) -> None:
    entry = {
        "name": "db",
        "command": "true",
        "args": ["--dsn", "x"],
        "auto_enable": "if_match",
        "enable_if": {"env_set": "DB_URL"},
    }
    env = {ENV_VAR: json.dumps([entry])}
    assert "db" not in names(env, tmp_path)
    assert "db" in names({**env, "DB_URL": "postgres://"}, tmp_path)


def test_the_path_goes_where_path_arg_index_says(tmp_path: Path) -> None:
    entry = {
        "name": "docs",
        "command": "true",
        "args": ["serve", "--verbose"],
        "requires_path": True,
        "path_arg_index": 1,
        "auto_enable": "with_path",
    }
    configs, _ = auto_enabled(tmp_path, load_definitions({ENV_VAR: json.dumps([entry])}), {})
    docs = next(c for c in configs if c.name == "docs")
    assert docs.args == ["serve", str(tmp_path.resolve()), "--verbose"]


def test_a_user_entry_replaces_the_builtin_of_the_same_name(tmp_path: Path) -> None:
    entry = {"name": "filesystem", "command": "true", "auto_enable": "never"}
    assert names({ENV_VAR: json.dumps([entry])}, tmp_path) == []


def test_the_file_is_read_when_the_variable_is_unset(tmp_path: Path) -> None:
    file = tmp_path / "mcp-servers.json"
    file.write_text(json.dumps({"servers": [{"name": "x", "command": "true"}]}))
    assert "x" in [d.name for d in load_definitions({}, file)]


def test_http_definitions_become_http_servers(tmp_path: Path) -> None:
    entry = {
        "name": "remote",
        "transport": "streamable-http",  # Ollama's name for it
        "url": "http://127.0.0.1:9/mcp",
        "headers": {"Authorization": "Bearer x"},
        "auto_enable": "always",
    }
    configs, _ = auto_enabled(tmp_path, load_definitions({ENV_VAR: json.dumps([entry])}), {})
    remote = next(c for c in configs if c.name == "remote")
    assert (remote.transport, remote.base_url) == ("http", "http://127.0.0.1:9/mcp")
    assert remote.headers == {"Authorization": "Bearer x"}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{not json", r"\$FARMHAND_MCP_SERVERS: not valid JSON \(line 1, column 2"),
        ('{"servers": 3}', r'expected \{"servers": \[...\]\}'),
        (
            '[{"name": "git", "command": "g", "auto_enable": "sometimes"}]',
            r"servers\[0\] \('git'\)\.auto_enable: Input should be 'never', 'always',",
        ),
        (
            '[{"name": "a", "command": "a"}, {"name": "b", "comand": "b"}]',
            r"servers\[1\] \('b'\)\.comand: Extra inputs are not permitted",
        ),
        ('[{"name": "web", "transport": "http"}]', r"servers\[0\] \('web'\): a http server"),
        (
            '[{"name": "x", "command": "x", "auto_enable": "if_match"}]',
            r"if_match needs `enable_if`",
        ),
        ('[{"name": "a", "command": "a"}, {"name": "a", "command": "b"}]', "used twice"),
    ],
)
def test_a_bad_definition_names_the_entry_and_the_field(text: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        parse_definitions(text, f"${ENV_VAR}")
