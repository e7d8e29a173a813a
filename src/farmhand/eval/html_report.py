"""An eval's results as one self-contained HTML page (`farmhand eval --html FILE`).

The page needs nothing else: its CSS is inline and allowed by a hash in its own
Content-Security-Policy (no `unsafe-inline`), its charts are inline SVG drawn with
attributes, and it has no script at all, so it opens from disk, from a mail, or from the
playground, and fetches nothing. Everything a model or a suite wrote goes through Jinja's
autoescaping: a prompt holding `<script>` is shown as text.

Each run is also kept under `FARMHAND_HOME/eval/` (`keep_report`), where the playground
lists it.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path
from typing import Any

import jinja2
from markupsafe import Markup

from farmhand.eval.scoring import ItemResult, TargetSummary
from farmhand.eval.suite import EvalCase, ExpectedCall, Suite
from farmhand.messages import Message, ToolCall
from farmhand.paths import eval_reports_dir

COLOURS = ("#2f6b3a", "#1f5f8b", "#8a5a00", "#8b2f5f", "#5a4a8b", "#2f7f7f")
"""One per target, in order (cycled): dark enough for text contrast on white."""
CSS = """
body { margin: 0 auto; max-width: 1200px; padding: 1rem 1.5rem; font: 15px/1.45 system-ui,
  sans-serif; color: #1d1f1c; background: #fff; }
h1 { font-size: 1.4rem; margin: 0.2rem 0; } h2 { font-size: 1.1rem; margin-top: 1.6rem; }
h3 { font-size: 1rem; margin: 0 0 0.4rem; } h4 { font-size: 0.85rem; margin: 0.5rem 0 0.2rem; }
.muted { color: #565b55; } .small { font-size: 0.82rem; }
table { border-collapse: collapse; width: 100%; font-size: 0.88rem; }
th, td { border-bottom: 1px solid #d6d3c9; padding: 0.3rem 0.5rem; text-align: left; }
.charts { display: grid; grid-template-columns: repeat(auto-fill, minmax(330px, 1fr));
  gap: 0.8rem; }
figure { margin: 0; padding: 0.6rem; border: 1px solid #d6d3c9; border-radius: 6px; }
figcaption { font-weight: 600; margin-bottom: 0.3rem; }
.case { border-top: 1px solid #d6d3c9; padding: 0.8rem 0; }
.grid { display: grid; grid-template-columns: repeat(auto-fit, minmax(260px, 1fr));
  gap: 0.8rem; }
.grid > div { padding: 0.4rem 0.6rem; border-radius: 6px; background: #f7f6f2; }
.grid > .pass { border-left: 4px solid #2f6b3a; } .grid > .fail { border-left: 4px solid #a11d1d; }
pre { margin: 0.2rem 0; padding: 0.3rem 0.4rem; background: #fff; border-radius: 4px;
  white-space: pre-wrap; overflow-wrap: anywhere; font-size: 0.8rem; }
.swatch { vertical-align: -1px; }
"""
CHART_LEFT, CHART_SPAN, CHART_TAIL, BAR_STEP = 130, 180, 90, 24
TEMPLATE = "report.html.jinja"
REPORT_SUFFIX = ".html"


def render_html(
    suite: Suite, summaries: Sequence[TargetSummary], written: datetime | None = None
) -> str:
    """The page for `summaries`, the results of `suite`'s cases."""
    colours = {s.target: COLOURS[i % len(COLOURS)] for i, s in enumerate(summaries)}
    results = {s.target: {r.case_id: r for r in s.results} for s in summaries}
    environment = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined)
    template = environment.from_string(
        resources.files("farmhand.eval").joinpath(TEMPLATE).read_text("utf-8")
    )
    return template.render(
        suite=suite.name,
        written=(written or datetime.now(UTC)).strftime("%Y-%m-%d %H:%M UTC"),
        policy=content_security_policy(),
        css=Markup(CSS),  # ours, constant: inside <style> it must not be escaped
        targets=[_target(s, colours[s.target]) for s in summaries],
        charts=_charts(suite, summaries, colours),
        cases=[_case(case, summaries, results, colours) for case in suite.cases],
    )


def content_security_policy() -> str:
    """Nothing may load or run; only the page's own stylesheet applies."""
    digest = base64.b64encode(hashlib.sha256(CSS.encode()).digest()).decode()
    return f"default-src 'none'; style-src 'sha256-{digest}'; base-uri 'none'; form-action 'none'"


def keep_report(html: str, suite: str, home: Path | None = None) -> Path:
    """Writes the page into the reports folder (`FARMHAND_HOME/eval/`) under a name of its
    time and suite, never over an earlier one; returns its path."""
    folder = eval_reports_dir(home)
    folder.mkdir(parents=True, exist_ok=True)
    slug = re.sub(r"[^A-Za-z0-9_-]+", "-", suite).strip("-")[:60] or "suite"
    stem = f"{datetime.now(UTC).strftime('%Y%m%d-%H%M%S')}-{slug}"
    for number in range(1, 1000):
        path = folder / (stem + (f"-{number}" if number > 1 else "") + REPORT_SUFFIX)
        try:
            with path.open("x", encoding="utf-8") as file:
                file.write(html)
            return path
        except FileExistsError:
            continue
    raise FileExistsError(f"{folder} already holds reports named {stem}-1 to -999")


def _target(summary: TargetSummary, colour: str) -> dict[str, Any]:
    share = summary.schema_valid_share
    per_item = summary.per_item()
    return {
        "name": summary.target,
        "colour": colour,
        "description": summary.description,
        "mean": f"{summary.mean_accuracy:.1%}",
        "all": f"{summary.accuracy:.1%} ({sum(r.passed for r in summary.results)}"
        f"/{len(summary.results)})",
        "valid": "no calls"
        if share is None
        else f"{share:.0%} ({summary.valid_calls}/{summary.calls})",
        "prompt_tokens": f"{per_item['prompt_tokens']:.0f}",
        "completion_tokens": f"{per_item['completion_tokens']:.1f}",
        "seconds": f"{per_item['seconds']:.2f}",
    }


@dataclass(frozen=True)
class _Bar:
    name: str
    colour: str
    share: float
    text: str


def _charts(
    suite: Suite, summaries: Sequence[TargetSummary], colours: dict[str, str]
) -> list[dict[str, Any]]:
    """One chart per category (a bar per target, side by side), then the mean of them."""
    charts = []
    for category in suite.categories:
        bars = []
        for summary in summaries:
            score = summary.categories.get(category)
            if score is not None:
                text = f"{score.accuracy:.0%} ({score.passed}/{score.total})"
                bars.append(_Bar(summary.target, colours[summary.target], score.accuracy, text))
        charts.append(_chart(category, bars))
    means = [
        _Bar(s.target, colours[s.target], s.mean_accuracy, f"{s.mean_accuracy:.1%}")
        for s in summaries
    ]
    charts.append(_chart("mean of categories", means))
    return charts


def _chart(title: str, bars: Sequence[_Bar]) -> dict[str, Any]:
    label = f"{title}: " + ", ".join(f"{bar.name} {bar.text}" for bar in bars)
    return {
        "title": title,
        "label": label,
        "left": CHART_LEFT,
        "span": CHART_SPAN,
        "width": CHART_LEFT + CHART_SPAN + CHART_TAIL,
        "height": BAR_STEP * len(bars) + 4,
        "bars": [
            {
                "name": bar.name[:18],
                "colour": bar.colour,
                "y": 2 + BAR_STEP * index,
                "length": round(CHART_SPAN * bar.share, 1),
                "text": bar.text,
            }
            for index, bar in enumerate(bars)
        ],
    }


def _case(
    case: EvalCase,
    summaries: Sequence[TargetSummary],
    results: dict[str, dict[str, ItemResult]],
    colours: dict[str, str],
) -> dict[str, Any]:
    found = [(s.target, results[s.target].get(case.id)) for s in summaries]
    return {
        "id": case.id,
        "category": case.category,
        "messages": [_message(m) for m in case.messages],
        "tools": ", ".join(t.name for t in case.tools) or "none",
        "expected": [_expected(call) for call in case.expected],
        "answer_contains": " or ".join(map(repr, case.answer_contains)),
        "results": [
            {
                "target": target,
                "colour": colours[target],
                "passed": result.passed,
                "reason": result.reason,
                "detail": result.detail,
                "calls": [_call(c) for c in result.output.calls],
                "answer": result.output.text,
            }
            for target, result in found
            if result is not None
        ],
    }


def _message(message: Message) -> dict[str, str]:
    text = message.content
    if message.tool_calls:
        text = "\n".join([text, *map(_call, message.tool_calls)]).strip()
    return {"role": message.role, "text": text}


def _call(call: ToolCall) -> str:
    return f"{call.name}({json.dumps(call.arguments, ensure_ascii=False)})"


def _expected(call: ExpectedCall) -> str:
    """`name(key = a | b, other = c | (may be left out))`."""
    arguments = [
        f"{key} = "
        + " | ".join(
            "(may be left out)" if value is None else json.dumps(value, ensure_ascii=False)
            for value in values
        )
        for key, values in call.arguments.items()
    ]
    if call.allow_extra:
        arguments.append("(other arguments allowed)")
    return f"{call.name}({', '.join(arguments)})"
