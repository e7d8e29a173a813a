"""The playground's side panel in headless chromium: the servers and their state, tool
search, a tool called by hand with a form built from its schema (and the form its server
asks for mid-call), and a server switched off for one chat."""

from __future__ import annotations

from collections.abc import Sequence

from playwright.sync_api import Page, expect
from tests.playground.conftest import Playground

from farmhand.messages import Message
from farmhand.providers.scripted import Step
from farmhand.tools.definition import ToolDefinition


def test_servers_show_their_state(page: Page, playground: Playground) -> None:
    servers = page.locator("#servers .server")
    expect(servers).to_have_count(3)
    # Listing the tools started every server; the page shows them running.
    page.click("#new-chat")  # refreshes the panel
    for name in ("fs", "gate", "ask"):
        expect(page.locator(f'[data-server="{name}"] .badge')).to_have_text("running")
    expect(page.locator('[data-server="gate"]')).to_contain_text("asks: always")


def test_tool_search_finds_the_tools_that_match(page: Page) -> None:
    page.fill("#tool-pattern", "pizza")
    page.click("#tool-search button")
    expect(page.locator("#tools-note")).to_contain_text("match “pizza”")
    tools = page.locator("#tools .tool-entry")
    best = {tools.nth(i).get_attribute("data-tool") for i in range(2)}
    assert best == {"ask:order_pizza", "gate:order_pizza"}  # the two servers' pizza tool


def test_a_tool_called_by_hand_from_its_schema_form(page: Page, playground: Playground) -> None:
    tool = page.locator('[data-tool="fs:read_text_file"]')
    tool.locator("summary").first.click()
    expect(tool.locator(".label").first).to_have_text("Annotations")
    expect(tool.locator("pre.schema").first).to_contain_text("readOnlyHint")
    tool.get_by_text("Schema", exact=True).click()
    expect(tool.locator("pre.schema").last).to_contain_text('"path"')
    tool.get_by_label("path").fill(str(playground.folder / "pond.txt"))
    tool.get_by_role("button", name="Call").click()
    expect(tool.locator(".hand-result .result")).to_have_text("ducks")
    page.screenshot(path=playground.shots / "hand-call.png", full_page=True)


def test_a_tool_of_an_approving_server_runs_by_hand_only_when_confirmed(page: Page) -> None:
    tool = page.locator('[data-tool="gate:wipe"]')
    tool.locator("summary").first.click()
    tool.get_by_label("target").fill("pond")
    tool.get_by_role("button", name="Call").click()
    expect(tool.locator(".hand-result .result.error")).to_contain_text("without approved: true")
    tool.get_by_label("I approve this call").check()
    tool.get_by_role("button", name="Call").click()
    expect(tool.locator(".hand-result .result")).to_have_text("wiped pond")


def test_a_server_switched_off_offers_no_tools_in_that_chat(
    page: Page, playground: Playground
) -> None:
    def without_gate(_: Sequence[Message], tools: Sequence[ToolDefinition]) -> None:
        names = {t.name for t in tools}
        assert "fs:read_text_file" in names and not any(n.startswith("gate:") for n in names)

    playground.model.script.add(Step.text("No gate today.", expect=without_gate))
    page.uncheck("#use-gate")
    page.fill("#prompt", "What can you do?")
    page.press("#prompt", "Enter")
    expect(page.locator(".message.assistant .text")).to_have_text("No gate today.")


def test_a_tool_called_by_hand_shows_its_servers_question_and_completes(
    page: Page, playground: Playground
) -> None:
    tool = page.locator('[data-tool="ask:order_pizza"]')
    tool.locator("summary").first.click()
    tool.get_by_role("button", name="Call").click()
    question = tool.locator(".hand-result .card.question")
    expect(question).to_contain_text("Which pizza shall I order?")
    question.get_by_label("Name").fill("Ada")
    question.get_by_label("Size").select_option(label="small")
    question.get_by_role("button", name="Send").scroll_into_view_if_needed()
    page.screenshot(path=playground.shots / "hand-call-question.png")
    question.get_by_role("button", name="Send").click()
    expect(tool.locator(".hand-result .result")).to_have_text(
        "ordered a small pizza with 2 toppings for Ada"
    )
