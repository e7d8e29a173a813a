"""An eval's results as a rich table (targets side by side) or as one JSON object for CI."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.table import Table

from farmhand.eval.scoring import ItemResult, TargetSummary, reasons

JSON_VERSION = 1


def table(suite: str, summaries: Sequence[TargetSummary]) -> Table:
    """One row per category and per measure, one column per target."""
    grid = Table(title=f"farmhand eval: {suite}", title_justify="left")
    grid.add_column("")
    for summary in summaries:
        grid.add_column(summary.target, justify="right")
    categories = list(dict.fromkeys(c for s in summaries for c in s.categories))
    for category in categories:
        cells = []
        for summary in summaries:
            score = summary.categories.get(category)
            cells.append(f"{score.accuracy:.0%} ({score.passed}/{score.total})" if score else "-")
        grid.add_row(category, *cells)
    grid.add_section()
    grid.add_row("mean of categories", *[f"{s.mean_accuracy:.1%}" for s in summaries])
    grid.add_row("all items", *[f"{s.accuracy:.1%}" for s in summaries])
    grid.add_row("schema-valid calls", *[_valid(s) for s in summaries])
    grid.add_row(
        "prompt tokens / item", *[f"{s.per_item()['prompt_tokens']:.0f}" for s in summaries]
    )
    grid.add_row(
        "completion tokens / item",
        *[f"{s.per_item()['completion_tokens']:.1f}" for s in summaries],
    )
    grid.add_row("seconds / item", *[f"{s.per_item()['seconds']:.2f}" for s in summaries])
    grid.add_row("failures by reason", *[_reasons(s.results) for s in summaries])
    return grid


def failures_table(summary: TargetSummary) -> Table:
    grid = Table(title=f"failures of {summary.target}", title_justify="left")
    for column in ("case", "category", "reason", "detail"):
        grid.add_column(column, overflow="fold")
    for result in summary.failures():
        grid.add_row(result.case_id, result.category, result.reason, result.detail)
    return grid


def as_json(suite: str, summaries: Sequence[TargetSummary]) -> dict[str, Any]:
    return {
        "version": JSON_VERSION,
        "suite": suite,
        "targets": [_target_json(s) for s in summaries],
    }


def _target_json(summary: TargetSummary) -> dict[str, Any]:
    return {
        "target": summary.target,
        "description": summary.description,
        "categories": {
            name: {"passed": s.passed, "total": s.total, "accuracy": round(s.accuracy, 4)}
            for name, s in summary.categories.items()
        },
        "accuracy": round(summary.accuracy, 4),
        "mean_accuracy": round(summary.mean_accuracy, 4),
        "schema_valid": {
            "valid": summary.valid_calls,
            "calls": summary.calls,
            "share": None
            if summary.schema_valid_share is None
            else round(summary.schema_valid_share, 4),
        },
        "per_item": {k: round(v, 3) for k, v in summary.per_item().items()},
        "failures_by_reason": reasons(summary.results),
        "items": [_item_json(r) for r in summary.results],
    }


def _item_json(result: ItemResult) -> dict[str, Any]:
    output = result.output
    return {
        "id": result.case_id,
        "category": result.category,
        "passed": result.passed,
        "reason": result.reason,
        "detail": result.detail,
        "calls": [{"name": c.name, "arguments": c.arguments} for c in output.calls],
        "valid_calls": result.valid_calls,
        "answer": output.text,
        "prompt_tokens": output.usage.prompt_tokens,
        "completion_tokens": output.usage.completion_tokens,
        "seconds": round(output.seconds, 3),
    }


def _valid(summary: TargetSummary) -> str:
    share = summary.schema_valid_share
    if share is None:
        return "no calls"
    return f"{share:.0%} ({summary.valid_calls}/{summary.calls})"


def _reasons(results: Sequence[ItemResult]) -> str:
    counts = reasons(results)
    return " ".join(f"{name}:{n}" for name, n in sorted(counts.items())) or "none"
