"""farmhand's version, from the installed package's metadata (how farmhand names itself to
MCP servers and clients)."""

from __future__ import annotations

import importlib.metadata


def farmhand_version() -> str:
    try:
        return importlib.metadata.version("farmhand")
    except importlib.metadata.PackageNotFoundError:  # run from a source tree, not installed
        return "0.0.0+source"
