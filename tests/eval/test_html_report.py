"""`farmhand eval --html`: one page that needs nothing else (its own strict CSP, inline CSS
allowed by hash, SVG charts, no script, no address to fetch), a chart per category with the
targets side by side, each item's prompt, expected and actual calls, everything a model or a
suite wrote escaped; kept under FARMHAND_HOME/eval/ without overwriting."""

from __future__ import annotations

import base64
import hashlib
import html
import re
from datetime import UTC, datetime
from pathlib import Path

import pytest
from tests.eval.hostile_results import results

from farmhand.eval.html_report import CSS, keep_report, render_html


def test_everything_written_is_escaped_and_nothing_can_run_or_load() -> None:
    page = render_html(*results())
    assert "<script" not in page.lower() and "<img" not in page.lower()
    assert "<b>suite</b>" not in page and "<i>model</i>" not in page
    assert "&lt;script&gt;alert(&#39;prompt&#39;)&lt;/script&gt;" in page
    assert "&lt;/pre&gt;&lt;script&gt;" in page
    assert "&lt;img src=x onerror=alert(1)&gt;" in page
    assert not re.search(r"<[^<>]*\s(src|href)=", page) and "://" not in page
    assert " style=" not in page  # a style attribute would need 'unsafe-inline'


def test_the_pages_own_policy_allows_its_stylesheet_by_hash_only() -> None:
    page = render_html(*results())
    [policy] = re.findall(r'http-equiv="Content-Security-Policy" content="([^"]+)"', page)
    policy = html.unescape(policy)
    digest = base64.b64encode(hashlib.sha256(CSS.encode()).digest()).decode()
    assert policy.startswith("default-src 'none'; ")
    assert f"style-src 'sha256-{digest}'" in policy and "unsafe" not in policy
    [style] = re.findall(r"<style>(.*?)</style>", page, re.DOTALL)
    assert style == CSS


def test_a_chart_per_category_with_the_targets_side_by_side_and_every_item() -> None:
    page = render_html(*results(), written=datetime(2026, 11, 27, tzinfo=UTC))
    captions = re.findall(r"<figcaption>(.*?)</figcaption>", page)
    assert captions == ["single", "no_call", "mean of categories"]
    labels = re.findall(r'<svg role="img" aria-label="([^"]+)"', page)
    assert labels[0] == "single: small &lt;i&gt;model&lt;/i&gt; 100% (1/1), other 0% (0/1)"
    assert labels[1] == "no_call: small &lt;i&gt;model&lt;/i&gt; 100% (1/1), other 100% (1/1)"
    bars = re.findall(r'<rect x="130" y="\d+" width="([\d.]+)" height="18" fill="#(?!ece)', page)
    assert bars == ["180.0", "0.0", "180.0", "180.0", "180.0", "90.0"]
    text = html.unescape(page)
    assert 'get_weather(city = "Paris" | "Paris, FR")' in text  # expected
    assert 'get_weather({"city": "Paris"})' in text  # actual
    assert "failed (wrong_calls)" in page and "an answer, no call" in page
    assert "2026-11-27 00:00 UTC" in page


def test_kept_reports_never_overwrite_each_other(tmp_path: Path) -> None:
    first = keep_report("<p>one</p>", "bfcl:simple/../x", home=tmp_path)
    second = keep_report("<p>two</p>", "bfcl:simple/../x", home=tmp_path)
    assert first.parent == second.parent == tmp_path / "eval"
    assert first != second and first.read_text() == "<p>one</p>"
    assert re.fullmatch(r"\d{8}-\d{6}-bfcl-simple-x(-2)?\.html", first.name), first.name
    assert second.name.endswith("-2.html") or first.name[:15] != second.name[:15]


@pytest.mark.parametrize("suite", ["", "..", "///"])
def test_a_suite_name_with_nothing_usable_still_makes_a_name(tmp_path: Path, suite: str) -> None:
    assert keep_report("x", suite, home=tmp_path).name.endswith("-suite.html")
