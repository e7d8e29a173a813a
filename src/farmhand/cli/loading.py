"""Progress displays for the work a command waits on: loading the embedded model (llama.cpp
gives no byte counts: a pulsing bar) and assembling or verifying a GGUF (a byte bar)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import (
    BarColumn,
    DownloadColumn,
    Progress,
    SpinnerColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
    TransferSpeedColumn,
)

from farmhand.providers.llamacpp import load_llama


def load_with_progress(path: Path, n_ctx: int) -> Any:
    """A `providers.factory.LlamaLoader` that shows a pulsing bar on stderr meanwhile."""
    size_mb = path.stat().st_size / 1e6
    columns = (
        SpinnerColumn(),
        TextColumn(f"loading {path.name} ({size_mb:.0f} MB)"),
        BarColumn(),
        TimeElapsedColumn(),
    )
    # The bar refreshes from rich's own thread while llama.cpp loads in this one.
    with Progress(*columns, console=Console(stderr=True), transient=True) as bar:
        bar.add_task("load", total=None)  # indeterminate: a pulsing bar
        return load_llama(path, n_ctx=n_ctx)


@contextmanager
def byte_bar(total: int, what: str) -> Iterator[Callable[[int], None]]:
    """A `models.assemble.ByteProgress`: a byte bar on stderr, so that commands printing a
    path on stdout stay scriptable."""
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        DownloadColumn(),
        TransferSpeedColumn(),
        TimeRemainingColumn(),
    )
    with Progress(*columns, console=Console(stderr=True)) as bar:
        task = bar.add_task(what, total=total)
        yield lambda n: bar.advance(task, n)
