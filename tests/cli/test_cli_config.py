"""`farmhand config show` and `farmhand config validate`, mounted as the lead mounts them."""

from __future__ import annotations

import json
import logging
import textwrap
from pathlib import Path

import pytest
import typer
import yaml
from tests.config.test_loader import BLOCKS
from typer.testing import CliRunner

from farmhand.cli.common import project_config
from farmhand.cli.config import config_app
from farmhand.models.catalog import DEFAULT_MODEL

app = typer.Typer()
app.add_typer(config_app, name="config")
runner = CliRunner()

CONFIG = """
name: demo
mcp:
  servers:
    - name: fs
      command: npx
      args: [-y, server-filesystem, /data]
      env:
        NODE_ENV: production
        GITHUB_TOKEN: ${env:GH}
    - name: api
      transport: http
      base_url: https://bot:hunter2@api.example.com/mcp
      headers:
        Authorization: Bearer ${env:API_TOKEN}
        X-API-Key: short
        X-Custom-Header: my-value
runtime:
  default_model: gpt
  models:
    - name: gpt
      provider: openai
      model: gpt-4o
      api_key: ${env:OPENAI_KEY}
      mcp_servers: [api]
      model_api_parameters: {top_p: 0.9, max_tokens: 100}
    - name: local
prompts:
  - name: default
    messages:
      - role: system
        content: |
          You are helpful.
          Use tools.
"""


@pytest.fixture
def config_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("GH", "ghp_abcdefghijklmnop1234")
    monkeypatch.setenv("API_TOKEN", "tok-abcdefghijklmnopWXYZ")
    monkeypatch.setenv("OPENAI_KEY", "sk-proj-0123456789abcdef")
    path = tmp_path / "farmhand.yaml"
    path.write_text(textwrap.dedent(CONFIG), encoding="utf-8")
    return path


def test_validate_ok(config_file: Path) -> None:
    result = runner.invoke(app, ["config", "validate", "--config", str(config_file)])
    assert result.exit_code == 0, result.output
    assert result.stdout == f"ok: {config_file} (2 servers, 2 models)\n"


def test_validate_finds_farmhand_yaml_in_the_working_directory(
    config_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(config_file.parent)
    result = runner.invoke(app, ["config", "validate"])
    assert result.stdout == "ok: farmhand.yaml (2 servers, 2 models)\n"


def test_validate_without_any_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["config", "validate"])
    assert result.exit_code == 0
    assert result.stdout == (
        "ok: no farmhand.yaml or llamafarm.yaml here, built-in default (0 servers, 1 model)\n"
    )


def test_a_llamafarm_project_is_found_and_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A LlamaFarm project folder (its llamafarm.yaml, from the seed's complete example, and
    no farmhand.yaml) is read, and every command says which file it runs with."""
    (text,) = [t for h, t in BLOCKS if h == "Complete Configuration Example"]
    monkeypatch.setenv("COMPANY_API_KEY", "sk-live-0123456789")
    (tmp_path / "llamafarm.yaml").write_text(text, encoding="utf-8")
    monkeypatch.chdir(tmp_path)

    result = runner.invoke(app, ["config", "validate"])
    assert result.stdout == "ok: llamafarm.yaml (4 servers, 3 models)\n"
    result = runner.invoke(app, ["config", "show"])
    assert result.stdout.startswith("# llamafarm.yaml; secrets masked\n")
    assert yaml.safe_load(result.stdout)["runtime"]["default_model"] == "assistant"

    caplog.set_level(logging.INFO, logger="farmhand")
    config = project_config(None)
    assert config.source == Path("llamafarm.yaml")
    (tmp_path / "llamafarm.yaml").unlink()
    project_config(None)
    assert [r.getMessage() for r in caplog.records if r.name == "farmhand.config"] == [
        "config: llamafarm.yaml",
        "config: no farmhand.yaml or llamafarm.yaml here, built-in default",
    ]


def test_validate_reports_every_problem(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NOT_SET_ANYWHERE", raising=False)
    path = tmp_path / "bad.yaml"
    path.write_text(
        "mcp:\n"
        "  servers:\n"
        "    - name: s\n"
        "      transport: tcp\n"
        "runtime:\n"
        "  tool_timeout: ${env:NOT_SET_ANYWHERE}\n",
        encoding="utf-8",
    )
    result = runner.invoke(app, ["config", "validate", "-c", str(path)])
    assert result.exit_code == 1
    assert result.stdout == ""
    assert result.stderr.splitlines() == [
        f"error: 2 problems in {path}:",
        f"{path}:4: mcp.servers[0].transport: should be 'stdio', 'http' or 'sse' (got 'tcp')",
        f"{path}:6: runtime.tool_timeout: environment variable NOT_SET_ANYWHERE is not set;"
        " export NOT_SET_ANYWHERE=... or give a default: ${env:NOT_SET_ANYWHERE:-value}",
    ]


@pytest.mark.parametrize("command", ["validate", "show"])
def test_missing_config_file(tmp_path: Path, command: str) -> None:
    missing = tmp_path / "missing.yaml"
    result = runner.invoke(app, ["config", command, "-c", str(missing)])
    assert result.exit_code == 1
    assert result.stderr == (
        f"error: config file {missing} does not exist; check the path, or leave out --config"
        " to use ./farmhand.yaml, ./llamafarm.yaml or the built-in default\n"
    )


def test_show_prints_the_resolved_config_with_secrets_masked(config_file: Path) -> None:
    result = runner.invoke(app, ["config", "show", "-c", str(config_file)])
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith(f"# {config_file}; secrets masked\n")
    data = yaml.safe_load(result.stdout)
    fs, api = data["mcp"]["servers"]
    assert fs["env"] == {"NODE_ENV": "production", "GITHUB_TOKEN": "****1234"}
    assert fs["args"] == ["-y", "server-filesystem", "/data"]
    assert api["headers"] == {
        "Authorization": "Bearer ****WXYZ",
        "X-API-Key": "****",
        "X-Custom-Header": "my-value",
    }
    assert api["base_url"] == "https://bot:****@api.example.com/mcp"
    gpt, local = data["runtime"]["models"]
    assert gpt["api_key"] == "****cdef"
    assert gpt["model_api_parameters"] == {"top_p": 0.9, "max_tokens": 100}
    assert gpt["mcp_servers"] == ["api"]
    # Defaults are filled in; unset optional values are left out (mcp_servers omitted = all).
    assert local == {
        "name": "local",
        "provider": "llamacpp",
        "model": DEFAULT_MODEL,
        "tool_call_strategy": "native_api",
        "text_tool_calls": True,
        "constrained": False,
        "prefix_cache": True,
        "grounding": True,
        "tools": [],
        "prompts": [],
        "rag": [],
        "default": False,
        "model_api_parameters": {},
    }
    assert data["runtime"]["max_tool_rounds"] == 10
    assert data["namespace"] == "default"
    for secret in ("hunter2", "ghp_abcdefghijklmnop", "tok-abcdefgh", "sk-proj-0123"):
        assert secret not in result.stdout
    # Multi-line prompts stay readable.
    assert "content: |\n" in result.stdout
    assert data["prompts"][0]["messages"][0]["content"] == "You are helpful.\nUse tools.\n"


def test_show_json(config_file: Path) -> None:
    result = runner.invoke(app, ["config", "show", "--json", "-c", str(config_file)])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["name"] == "demo"
    assert data["mcp"]["servers"][1]["headers"]["Authorization"] == "Bearer ****WXYZ"
    assert data["runtime"]["models"][0]["api_key"] == "****cdef"


def test_show_output_loads_back_as_a_config(config_file: Path, tmp_path: Path) -> None:
    shown = runner.invoke(app, ["config", "show", "-c", str(config_file)]).stdout
    again = tmp_path / "again.yaml"
    again.write_text(shown, encoding="utf-8")
    result = runner.invoke(app, ["config", "validate", "-c", str(again)])
    assert result.stdout == f"ok: {again} (2 servers, 2 models)\n"


def test_show_without_any_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["config", "show"])
    assert result.exit_code == 0
    assert result.stdout.startswith(
        "# no farmhand.yaml or llamafarm.yaml here, built-in default; secrets masked\n"
    )
    data = yaml.safe_load(result.stdout)
    assert data["mcp"] == {"servers": []}
    assert [m["name"] for m in data["runtime"]["models"]] == ["default"]


def test_show_reports_errors(tmp_path: Path) -> None:
    path = tmp_path / "farmhand.yaml"
    path.write_text("runtime:\n  modles: []\n", encoding="utf-8")
    result = runner.invoke(app, ["config", "show", "-c", str(path)])
    assert result.exit_code == 1
    assert result.stderr == (
        f"error: {path}:2: runtime.modles: unknown key 'modles' (did you mean 'models'?);"
        " allowed keys: default_model, models, max_tool_rounds, tool_timeout,"
        " max_tool_result_chars, jit_tools, jit_max_tools, jit_connect_eager, saved_results\n"
    )


def test_help_lists_both_commands() -> None:
    result = runner.invoke(app, ["config", "--help"])
    assert result.exit_code == 0
    assert "show" in result.stdout and "validate" in result.stdout
