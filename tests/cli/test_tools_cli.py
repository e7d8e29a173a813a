"""`farmhand tools list/search/call` against the real filesystem server on a tmp folder."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

Farmhand = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    papers = tmp_path / "papers"
    papers.mkdir()
    (papers / "invoice.txt").write_text("total: 42\n")
    (papers / "plan.md").write_text("# plan\n")
    return tmp_path


@pytest.fixture
def tools(folder: Path, farmhand_cli: Farmhand) -> Callable[..., subprocess.CompletedProcess[str]]:
    """`farmhand tools ...` in the folder, with no user definitions file in the way."""
    env = {"XDG_CONFIG_HOME": str(folder / "config"), "FARMHAND_MCP_SERVERS": ""}

    def run(*args: str, **extra: str) -> subprocess.CompletedProcess[str]:
        return farmhand_cli("tools", *args, cwd=folder, timeout=60, env={**env, **extra})

    return run


def assert_one_line_failure(run: subprocess.CompletedProcess[str], *needles: str) -> None:
    assert run.returncode == 1, run.stderr
    assert "Traceback" not in run.stderr
    assert run.stderr.startswith("error: ") and run.stderr.count("\n") == 1, run.stderr
    for needle in needles:
        assert needle in run.stderr, run.stderr


def test_list_shows_every_filesystem_tool(
    tools: Callable[..., subprocess.CompletedProcess[str]],
) -> None:
    run = tools("list", "--tools", "papers")
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    # First each server, with its definition's description and capabilities.
    assert lines[0].split() == ["filesystem", "Read", "files", "and", "folders", "(files)"]
    names = [line.split()[0] for line in lines if ":" in line]
    assert "filesystem:list_directory" in names
    assert "filesystem:write_file" in names  # the user, not a model, is calling here
    assert len(names) >= 10


def test_a_definitions_description_and_capabilities_are_shown_and_searched(
    tools: Callable[..., subprocess.CompletedProcess[str]], folder: Path
) -> None:
    shelf = {
        "name": "shelf",
        "description": "The team's shared drive",
        "capabilities": ["storage", "documents"],
        "command": "mcp-server-filesystem",
        "args": [str(folder / "papers")],
        "auto_enable": "always",
    }
    defined = {"FARMHAND_MCP_SERVERS": json.dumps({"servers": [shelf]})}
    listed = tools("list", **defined)
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.splitlines()[0] == "shelf  The team's shared drive (storage, documents)"

    # No tool of the filesystem server is named or described after storage: its server is.
    found = tools("search", "*storage*", **defined)
    assert found.returncode == 0, found.stderr
    names = [line.split()[0] for line in found.stdout.splitlines()]
    assert "shelf:list_directory" in names and len(names) >= 10
    found = tools("search", "*shared drive*", **defined)
    assert found.returncode == 0, found.stderr
    assert "shelf:read_text_file" in found.stdout


def test_search_ranks_matches_by_relevance(
    tools: Callable[..., subprocess.CompletedProcess[str]],
) -> None:
    run = tools("search", "*list*", "--tools", "papers")
    assert run.returncode == 0, run.stderr
    names = [line.split()[0] for line in run.stdout.splitlines()]
    assert names[0] == "filesystem:list_directory"
    assert "filesystem:write_file" not in names


def test_search_without_a_match_fails_with_a_hint(
    tools: Callable[..., subprocess.CompletedProcess[str]],
) -> None:
    assert_one_line_failure(tools("search", "*kubernetes*", "--tools", "papers"), "broader pattern")


def test_call_runs_one_tool_and_prints_its_result(
    tools: Callable[..., subprocess.CompletedProcess[str]],
) -> None:
    run = tools("call", "filesystem:list_directory", "path=papers", "--tools", "papers")
    assert run.returncode == 0, run.stderr
    assert "[FILE] invoice.txt" in run.stdout and "[FILE] plan.md" in run.stdout


def test_call_reads_values_as_json_when_they_parse(
    tools: Callable[..., subprocess.CompletedProcess[str]],
) -> None:
    run = tools(
        "call",
        "filesystem:read_text_file",
        "path=papers/invoice.txt",
        "head=1",
        "--tools",
        "papers",
    )
    assert run.returncode == 0, run.stderr  # head=1 went as the number the schema wants
    assert run.stdout.strip() == "total: 42"


def test_call_errors_are_one_line(tools: Callable[..., subprocess.CompletedProcess[str]]) -> None:
    t = tools
    assert_one_line_failure(
        t("call", "filesystem:read_text_file", "path=../secret", "--tools", "papers"),
        "Access denied",
    )
    assert_one_line_failure(t("call", "filesystem:fly", "--tools", "papers"), "no tool 'fly'")
    assert_one_line_failure(t("call", "git:log", "--tools", "papers"), "no MCP server named 'git'")
    assert_one_line_failure(t("call", "list_directory", "--tools", "papers"), "SERVER:TOOL")
    assert_one_line_failure(t("call", "filesystem:list_directory", "papers"), "key=value")
    assert_one_line_failure(
        t("call", "filesystem:list_directory", "--tools", "papers"),
        "arguments.path: missing required field",
    )
    assert_one_line_failure(t("list"), "no MCP servers", "--tools PATH")


def test_definitions_from_the_environment_are_used(
    tools: Callable[..., subprocess.CompletedProcess[str]],
) -> None:
    broken = json.dumps({"servers": [{"name": "x", "command": "true", "auto_enable": "maybe"}]})
    run = tools("list", "--tools", "papers", FARMHAND_MCP_SERVERS=broken)
    assert_one_line_failure(run, "$FARMHAND_MCP_SERVERS: servers[0] ('x').auto_enable")
    off = json.dumps([{"name": "filesystem", "command": "true", "auto_enable": "never"}])
    assert_one_line_failure(
        tools("list", "--tools", "papers", FARMHAND_MCP_SERVERS=off), "no MCP servers"
    )


def test_a_git_folder_turns_on_the_git_server(
    folder: Path, tools: Callable[..., subprocess.CompletedProcess[str]]
) -> None:
    subprocess.run(["git", "init", "-q", str(folder / "papers")], check=True)
    listed = tools("list", "--tools", "papers")
    assert listed.returncode == 0, listed.stderr
    assert "git:git_status" in listed.stdout
    status = tools("call", "git:git_status", "repo_path=papers", "--tools", "papers")
    assert status.returncode == 0, status.stderr
    assert "invoice.txt" in status.stdout  # untracked, in the new repository
