"""Load the embedded model behind a progress display (llama.cpp gives no byte counts)."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

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
    with Progress(*columns, console=Console(stderr=True), transient=True) as bar:
        bar.add_task("load", total=None)  # indeterminate: a pulsing bar while llama.cpp loads
        result: dict[str, Any] = {}

        def work() -> None:
            try:
                result["llama"] = load_llama(path, n_ctx=n_ctx)
            except BaseException as exc:  # re-raised in the caller's thread below
                result["error"] = exc

        worker = threading.Thread(target=work, daemon=True)
        worker.start()
        worker.join()
    if "error" in result:
        raise result["error"]
    return result["llama"]
