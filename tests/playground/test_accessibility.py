"""axe-core's scan of the playground finds no serious or critical violation: the empty
page, the page with a tool-call card, an open approval and a server's form in it, and an
eval report opened from the playground's list."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Page, expect
from tests.eval.hostile_results import results
from tests.playground.conftest import Playground
from tests.support.browser import serious_violations, watched_page

from farmhand.eval.html_report import keep_report, render_html
from farmhand.messages import ToolCall
from farmhand.providers.scripted import ScriptedProvider, Step


@pytest.fixture
def scanned(browser: Browser, playground: Playground) -> Iterator[Page]:
    playground.model.script = ScriptedProvider()
    playground.model.hold = False
    watched = watched_page(browser, bypass_csp=True)  # to inject axe-core
    watched.page.goto(playground.server.url + "/")
    watched.page.wait_for_selector("#tools .tool-entry")
    yield watched.page
    watched.page.context.close()
    playground.model.script.assert_done()
    assert watched.errors == [], watched.errors


def test_the_page_with_cards_and_questions_has_no_serious_violations(
    scanned: Page, playground: Playground
) -> None:
    assert serious_violations(scanned) == []
    listing = ToolCall("fs:list_directory", {"path": str(playground.folder)})
    playground.model.script.add(
        Step.calls(listing), Step.calls(ToolCall("ask:order_pizza", {}), text="Now a pizza.")
    )
    scanned.fill("#prompt", "List the files, then order a pizza")
    scanned.press("#prompt", "Enter")
    expect(scanned.locator(".card.question")).to_contain_text("Which pizza shall I order?")
    scanned.locator('[data-tool="fs:read_text_file"] summary').first.click()
    assert serious_violations(scanned) == []
    # Leave no question open: decline it, and let the chat end.
    playground.model.script.add(Step.text("No pizza then."))
    scanned.get_by_role("button", name="Decline").click()
    expect(scanned.locator(".message.assistant .text").last).to_have_text("No pizza then.")


def test_an_eval_report_has_no_serious_violations(scanned: Page, playground: Playground) -> None:
    kept = keep_report(render_html(*results()), "weather", home=playground.state.home)
    listed = scanned.evaluate("fetch('/api/eval/reports').then((r) => r.json())")
    [url] = [r["url"] for r in listed["reports"] if r["name"] == kept.name]
    scanned.goto(playground.server.url + url)
    expect(scanned.locator("figcaption").first).to_have_text("single")
    assert serious_violations(scanned) == []


def test_the_scan_does_find_a_violation(scanned: Page) -> None:
    # The control: an input nobody labelled is a critical violation axe-core reports.
    scanned.evaluate("document.querySelector('main').append(document.createElement('input'))")
    assert any(v.startswith("label (critical)") for v in serious_violations(scanned))
