"""MCP servers farmhand starts by itself, such as the filesystem server behind --tools DIR.

The set-up installs them from npm into the project's node_modules; nothing is fetched at run
time, so a missing server is an error that says how to install it.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from farmhand.config.models import McpServerConfig
from farmhand.errors import ToolServerError

FILESYSTEM_PACKAGE = "@modelcontextprotocol/server-filesystem"
FILESYSTEM_BIN = "mcp-server-filesystem"


def _node_bin_dirs() -> list[Path]:
    """Where installed Node servers may live: $FARMHAND_NODE_MODULES, then node_modules/.bin
    in the working directory and its parents, then beside farmhand's own source tree."""
    dirs: list[Path] = []
    if env := os.environ.get("FARMHAND_NODE_MODULES"):
        dirs.append(Path(env) / ".bin")
    for base in (Path.cwd(), Path(__file__).resolve()):
        dirs.extend(parent / "node_modules" / ".bin" for parent in [base, *base.parents])
    return dirs


def find_node_server(binary: str, package: str) -> str:
    if found := shutil.which(binary):
        return found
    for directory in _node_bin_dirs():
        candidate = directory / binary
        if candidate.is_file():
            return str(candidate)
    raise ToolServerError(
        f"the MCP server {package} is not installed; run `make setup` (or `npm install {package}`"
        " in this folder)"
    )


def filesystem_server(directory: Path, name: str = "filesystem") -> McpServerConfig:
    """The official filesystem server, restricted to `directory`."""
    if not directory.is_dir():
        raise ToolServerError(f"--tools {directory}: not a directory")
    command = find_node_server(FILESYSTEM_BIN, FILESYSTEM_PACKAGE)
    return McpServerConfig(
        name=name, transport="stdio", command=command, args=[str(directory.resolve())]
    )
