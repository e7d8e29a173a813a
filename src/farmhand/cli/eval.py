"""`farmhand eval`: check a model's tool calling on a suite before you rely on it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import anyio
import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from farmhand.cli.common import (
    ConfigOption,
    console,
    err_console,
    fail,
    project_config,
    user_errors,
)
from farmhand.cli.loading import provider_with_progress
from farmhand.config.models import FarmhandConfig, ModelConfig
from farmhand.errors import ConfigError
from farmhand.eval.html_report import keep_report, render_html
from farmhand.eval.report import as_json, failures_table, table
from farmhand.eval.runner import run_suite
from farmhand.eval.scoring import ItemResult, TargetSummary
from farmhand.eval.suite import Suite, load_suite
from farmhand.eval.targets import Target, parse_target
from farmhand.providers.base import Provider
from farmhand.providers.factory import provider_for
from farmhand.service.loaded_models import unbounded_models
from farmhand.service.state import ServiceState


def eval_command(
    suite: Annotated[
        str,
        typer.Argument(
            help="`builtin`, a JSONL suite file, or bfcl:CATEGORY[,CATEGORY...] (needs bfcl-eval)."
        ),
    ] = "builtin",
    target: Annotated[
        list[str] | None,
        typer.Option(
            "--target",
            "-t",
            help="MODEL[,strategy=native|prompt_based|constrained|jit][,key=value...];"
            " repeat to compare side by side. Default: the config's default model.",
        ),
    ] = None,
    category: Annotated[
        list[str] | None, typer.Option("--category", help="Only these categories (repeatable).")
    ] = None,
    limit: Annotated[
        int | None, typer.Option(help="At most this many cases per category.", min=1)
    ] = None,
    as_json_output: Annotated[
        bool, typer.Option("--json", help="Print one JSON object (every item) instead.")
    ] = False,
    details: Annotated[bool, typer.Option("--details", help="List every failed case.")] = False,
    html: Annotated[
        Path | None,
        typer.Option(
            "--html",
            help="Also write the results as one self-contained HTML page to this file (kept"
            " under FARMHAND_HOME/eval/ too, where the playground lists it).",
            dir_okay=False,
        ),
    ] = None,
    fail_under: Annotated[
        float | None,
        typer.Option(
            help="Exit 1 if any target's mean accuracy over categories is below this (0-1).",
            min=0.0,
            max=1.0,
        ),
    ] = None,
    config: ConfigOption = None,
) -> None:
    """Run a tool-calling suite against models and print accuracy per category."""
    with user_errors():
        cfg = project_config(config)
        targets = [parse_target(spec, cfg) for spec in target or ["default"]]
        chosen = load_suite(suite).select(category or [], limit)
        if html is not None and not html.expanduser().parent.is_dir():
            raise ConfigError(  # said before the run, not after it
                f"--html {html}: the folder {html.expanduser().parent} does not exist"
            )
        summaries = [_evaluate(cfg, t, chosen, quiet=as_json_output) for t in targets]
    if html is not None:
        _write_html(html, chosen, summaries, quiet=as_json_output)
    if as_json_output:
        print(json.dumps(as_json(chosen.name, summaries), ensure_ascii=False, indent=2))
    else:
        console.print(table(chosen.name, summaries))
        for summary in summaries if details else []:
            if summary.failures():
                console.print(failures_table(summary))
    below = [s.target for s in summaries if fail_under is not None and s.mean_accuracy < fail_under]
    if below:
        fail(f"mean accuracy below {fail_under:.0%} for: {', '.join(below)}")


def _write_html(path: Path, suite: Suite, summaries: list[TargetSummary], *, quiet: bool) -> None:
    page = render_html(suite, summaries)
    with user_errors():
        try:
            path.expanduser().write_text(page, encoding="utf-8")
            kept = keep_report(page, suite.name)
        except OSError as exc:
            raise ConfigError(f"cannot write the HTML report: {exc}") from None
    if not quiet:
        err_console.print(f"HTML report: {path} (kept as {kept})")


def _evaluate(
    config: FarmhandConfig, target: Target, suite: Suite, *, quiet: bool
) -> TargetSummary:
    def load(model: ModelConfig) -> Provider:
        return provider_for(model) if quiet else provider_with_progress(model, provider_for)

    columns = (
        TextColumn(f"{target.label}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("{task.fields[last]}"),
    )

    async def run() -> list[ItemResult]:
        # The service every face runs on: it loads the model (showing its own bars first:
        # one display at a time) and frees it at the end.
        models = unbounded_models()
        async with ServiceState.open(config, provider_factory=load, models=models) as state:
            provider = await state.provider(target.model)
            with Progress(*columns, console=err_console, transient=True, disable=quiet) as bar:
                task = bar.add_task("eval", total=len(suite.cases), last="")

                def advance(result: ItemResult) -> None:
                    mark = "ok" if result.passed else result.reason
                    bar.update(task, advance=1, last=f"{result.case_id}: {mark}")

                return await run_suite(provider, suite, target.options, on_item=advance)

    results = anyio.run(run)
    return TargetSummary(target.label, tuple(results), target.describe())
