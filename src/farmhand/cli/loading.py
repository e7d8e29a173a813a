"""Progress displays for the work a command waits on: loading the embedded model (llama.cpp
gives no byte counts: a pulsing bar) and assembling or verifying a GGUF (a byte bar). The
CLI builds a model's provider through `providers.factory` like every face, never reaching
into the embedded backend's modules."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

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

from farmhand.config.models import ModelConfig
from farmhand.errors import ModelError
from farmhand.models.assemble import cached_path, known_sha256
from farmhand.models.catalog import lookup
from farmhand.providers.base import Provider
from farmhand.providers.factory import provider_for
from farmhand.service.model_memory import model_source

ProviderBuilder = Callable[..., Provider]
"""`providers.factory.provider_for`, or a stand-in with its signature."""


def provider_with_progress(model: ModelConfig, build: ProviderBuilder = provider_for) -> Provider:
    """`build(model)` (`providers.factory.provider_for`), its slow steps drawn on stderr:
    assembling or verifying a catalog GGUF (byte bars, drawn by the factory's `progress`),
    or, when its file is ready, loading it (llama.cpp gives no byte counts: a pulsing bar,
    refreshed from rich's own thread while llama.cpp loads in this one). One display at a
    time: rich allows no other while one is live."""
    path = _ready_file(model)
    if path is None:
        return build(model, progress=byte_bar)
    size_mb = path.stat().st_size / 1e6
    columns = (
        SpinnerColumn(),
        TextColumn(f"loading {path.name} ({size_mb:.0f} MB)"),
        BarColumn(),
        TimeElapsedColumn(),
    )
    with Progress(*columns, console=Console(stderr=True), transient=True) as bar:
        bar.add_task("load", total=None)  # indeterminate: a pulsing bar
        return build(model)


def _ready_file(model: ModelConfig) -> Path | None:
    """The embedded model's GGUF when nothing is left to assemble or verify: a file given
    by path, or a catalog model's verified copy."""
    if model.provider != "llamacpp":
        return None
    source = model_source(model)
    try:
        catalog = lookup(source)
    except ModelError:
        path = Path(source).expanduser()
        return path if path.is_file() else None
    path = cached_path(catalog)
    return path if path.is_file() and known_sha256(path) == catalog.sha256 else None


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
