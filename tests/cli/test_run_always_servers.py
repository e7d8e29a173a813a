"""A bare `farmhand run` (no --tools) starts the definitions marked `auto_enable: always`,
as the Ollama MCP fork does: the real filesystem server, listed by /tools. The model is
never asked (only /tools and /exit are typed), so a backend that is not there is fine."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

Farmhand = Callable[..., subprocess.CompletedProcess[str]]

CONFIG = """
runtime:
  models:
    - name: remote
      provider: openai
      model: never-asked
      base_url: http://127.0.0.1:9/v1
"""
FILESYSTEM = Path(__file__).resolve().parents[2] / "node_modules" / ".bin" / "mcp-server-filesystem"


def test_always_servers_start_without_a_path(tmp_path: Path, farmhand_cli: Farmhand) -> None:
    (tmp_path / "farmhand.yaml").write_text(CONFIG)
    notes = tmp_path / "notes"
    notes.mkdir()
    definition = {
        "name": "notes",
        "command": str(FILESYSTEM),
        "args": [str(notes)],
        "auto_enable": "always",
    }
    env = {
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "OLLAMA_MCP_SERVERS": json.dumps({"servers": [definition]}),  # the fork's variable
        "FARMHAND_MCP_SERVERS": "",
    }
    run = farmhand_cli("run", "remote", cwd=tmp_path, input="/tools\n/exit\n", env=env)
    assert run.returncode == 0, run.stderr
    assert "notes:list_directory" in run.stdout
    assert "notes:write_file" in run.stdout  # named by the operator, not a folder of --tools

    env["OLLAMA_MCP_SERVERS"] = json.dumps({"servers": [{**definition, "auto_enable": "never"}]})
    run = farmhand_cli("run", "remote", cwd=tmp_path, input="/tools\n/exit\n", env=env)
    assert run.returncode == 0, run.stderr
    assert "no tools" in run.stdout and "notes:" not in run.stdout
