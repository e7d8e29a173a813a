"""The eval reports in the playground: a report `farmhand eval --html` kept under
FARMHAND_HOME/eval/ is listed, and its link opens it in a tab of its own, where it loads
nothing, runs nothing, breaks no rule of its policy (no console error), and shows what the
model wrote as text."""

from __future__ import annotations

from playwright.sync_api import Page, expect
from tests.eval.hostile_results import HOSTILE, results
from tests.playground.conftest import Playground
from tests.support.browser import Watched

from farmhand.eval.html_report import keep_report, render_html


def test_a_kept_report_is_listed_and_opens_with_its_charts(
    page: Page, watched: Watched, playground: Playground
) -> None:
    kept = keep_report(render_html(*results()), "weather", home=playground.state.home)
    page.click("#new-chat")  # refreshes the lists
    link = page.locator(f'#reports .report[data-name="{kept.name}"]')
    expect(link).to_contain_text("farmhand eval: weather <b>suite</b>")

    # Watched from its first request on: every page of the context but the playground.
    requests: list[str] = []
    context = page.context
    context.on(
        "request",
        lambda r: (r.is_navigation_request() or r.frame.page != page) and requests.append(r.url),
    )
    context.on("console", lambda m: m.page != page and watched.on_console(m))
    context.on("weberror", lambda e: watched.errors.append(f"report: {e.error}"))
    with context.expect_page() as opened:
        link.click()
    report = opened.value
    report.wait_for_load_state()
    expect(report.locator("figcaption")).to_have_text(["single", "no_call", "mean of categories"])
    expect(report.locator(".case").first).to_contain_text(HOSTILE)  # as text, not run
    expect(report.locator(".grid > .fail").first).to_have_css("border-left-style", "solid")
    report.set_viewport_size({"width": 1100, "height": 900})
    report.screenshot(path=playground.shots / "eval-report.png")
    page.screenshot(path=playground.shots / "eval-reports-listed.png")
    fetched = [url for url in requests if "/favicon.ico" not in url]
    assert len(fetched) == 1 and "/eval/reports/" in fetched[0], requests  # itself, nothing more
    report.close()
