"""What every command shares: the --config option and turning errors into one-line exits."""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, NoReturn

import typer
from rich.console import Console

from farmhand.config.loader import describe_source, find_config, load_config
from farmhand.config.models import FarmhandConfig
from farmhand.errors import ConfigError, FarmhandError

console = Console()
err_console = Console(stderr=True)

ConfigOption = Annotated[
    Path | None,
    typer.Option(
        "--config",
        "-c",
        help="Config file (llamafarm.yaml layout). Default: ./farmhand.yaml, else"
        " ./llamafarm.yaml, if present.",
        dir_okay=False,
    ),
]

ChatTemplateOption = Annotated[
    Path | None,
    typer.Option(
        "--chat-template-file",
        help="A Jinja chat template to render the embedded model's turns with instead of its"
        " GGUF's own (as llama-server's flag; the tool-call format is detected from it).",
        dir_okay=False,
    ),
]

ModelPathOption = Annotated[
    Path | None, typer.Option("--model-path", help="Use this local .gguf file.", dir_okay=False)
]
TemperatureOption = Annotated[float | None, typer.Option(help="Sampling temperature.")]
MaxTokensOption = Annotated[int | None, typer.Option(help="Most tokens per model turn.")]
SeedOption = Annotated[int | None, typer.Option(help="Sampling seed, for repeatable answers.")]


def project_config(explicit: Path | None) -> FarmhandConfig:
    """The config a command runs with (`--config`, else the folder's farmhand.yaml or
    llamafarm.yaml, else the built-in default), saying which one it is: on a terminal's
    stderr, and in the log at info (`--log-level info`), so a script's stderr keeps to
    errors."""
    path = find_config(explicit)
    config = load_config(path)
    source = describe_source(path)
    logging.getLogger("farmhand.config").info("config: %s", source)
    if err_console.is_terminal:
        err_console.print(f"[dim]config: {source}[/]", highlight=False)
    return config


def fail(message: str, code: int = 1) -> NoReturn:
    err_console.print(f"[bold red]error:[/] {message}", highlight=False, soft_wrap=True)
    raise typer.Exit(code)


@contextmanager
def user_errors() -> Iterator[None]:
    """Report FarmhandError as one line and a non-zero exit, never a traceback."""
    try:
        yield
    except FarmhandError as exc:
        fail(str(exc))
    except KeyboardInterrupt:
        err_console.print("interrupted")
        sys.exit(130)


LOG_LEVELS = {
    "trace": logging.DEBUG,  # uvicorn's lowest; farmhand has nothing below debug
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "warning": logging.WARNING,
    "error": logging.ERROR,
    "critical": logging.CRITICAL,
}
LogLevelOption = Annotated[
    str,
    typer.Option(
        "--log-level",
        help="farmhand's own log on stderr: debug shows the MCP lifecycle (servers started,"
        " tools loaded with count and names, each call with its duration and outcome).",
    ),
]


def quiet_logging(level: str = "warning") -> None:
    """farmhand's loggers at `level` (debug, info, warning, error), everything else at
    warning, set before anything else does: the MCP SDK otherwise sets the root logger to
    INFO with a rich handler, and every backend request would then be logged (httpx logs
    each at INFO) and rendered."""
    farmhand_level = LOG_LEVELS.get(level.lower())
    if farmhand_level is None:
        raise ConfigError(
            f"--log-level {level!r} is not a level; use one of {', '.join(LOG_LEVELS)}"
        )
    logging.basicConfig(
        level=max(farmhand_level, logging.WARNING),
        format="%(levelname)s: %(name)s: %(message)s",
    )
    logging.getLogger("farmhand").setLevel(farmhand_level)
