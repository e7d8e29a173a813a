"""The MCP servers `--tools PATH` turns on, from the server definitions."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from farmhand.config.models import McpServerConfig
from farmhand.errors import ConfigError
from farmhand.toolsets.mcp.definitions import auto_enabled, load_definitions


@dataclass(frozen=True)
class PathServers:
    servers: list[McpServerConfig]
    folder_servers: frozenset[str]  # started for the path (requires_path)
    notes: list[str]  # servers that should be on but could not be (not installed)


def servers_for_path(path: Path | None, environ: Mapping[str, str] = os.environ) -> PathServers:
    """The servers whose definitions auto-enable for `path` (None: `--tools` without one)."""
    if path is not None and not path.exists():
        raise ConfigError(f"--tools {path}: no such file or folder; name an existing path")
    definitions = load_definitions(environ)
    servers, notes = auto_enabled(path, definitions, environ)
    # Servers started for the path are treated like `chat --tools DIR`: relative paths mean
    # the user's working directory, and a model gets only their read-only tools.
    for_path = {d.name for d in definitions if d.requires_path}
    return PathServers(servers, frozenset(s.name for s in servers if s.name in for_path), notes)
