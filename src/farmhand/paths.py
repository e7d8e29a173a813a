"""Where farmhand keeps its files. FARMHAND_HOME moves all of them."""

from __future__ import annotations

import os
from pathlib import Path


def farmhand_home() -> Path:
    """`$FARMHAND_HOME`, else `~/.cache/farmhand`."""
    env = os.environ.get("FARMHAND_HOME")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "farmhand"


def models_dir() -> Path:
    return farmhand_home() / "models"


def kv_cache_dir() -> Path:
    """Saved KV states of prompt heads (system prompt + tools), reused across runs."""
    return farmhand_home() / "kv"


def rag_dir(home: Path | None = None) -> Path:
    """The RAG collections: `$FARMHAND_RAG_DIR`, else `rag/` under `home` (farmhand's)."""
    env = os.environ.get("FARMHAND_RAG_DIR")
    if env:
        return Path(env).expanduser()
    return (home or farmhand_home()) / "rag"


def eval_reports_dir(home: Path | None = None) -> Path:
    """The pages `farmhand eval --html` keeps, which the playground lists: `eval/` under
    `home` (farmhand's)."""
    return (home or farmhand_home()) / "eval"
