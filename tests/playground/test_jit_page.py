"""With just-in-time discovery on (`runtime.jit_tools`), the page shows the model's
`mcp_discover` call as a discovery card, with the tools it found, and the call of one of
them as a card of its own."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, expect
from tests.support.browser import watched_page
from tests.support.live import LiveServer, scripted_config

from farmhand.assembly import create_app
from farmhand.messages import ToolCall
from farmhand.providers.scripted import ScriptedProvider, Step
from farmhand.toolsets.mcp.known_servers import filesystem_server


@pytest.fixture
def jit(tmp_path: Path) -> Iterator[tuple[LiveServer, ScriptedProvider, Path]]:
    folder = tmp_path / "farm"
    folder.mkdir()
    (folder / "barn.txt").write_text("hay")
    config = scripted_config(filesystem_server(folder, "fs"))
    config.runtime.jit_tools = True
    script = ScriptedProvider()
    app = create_app(config, home=tmp_path / "home", provider_factory=lambda _: script)
    with LiveServer(app) as server:
        yield server, script, folder.resolve()
    script.assert_done()


def test_a_discovery_is_shown_as_one(
    browser: Browser, jit: tuple[LiveServer, ScriptedProvider, Path]
) -> None:
    server, script, folder = jit
    script.add(
        Step.calls(ToolCall("mcp_discover", {"pattern": "*list*"})),
        Step.calls(ToolCall("fs:list_directory", {"path": str(folder)})),
        Step.text("The farm has a barn."),
    )
    watched = watched_page(browser)
    page = watched.page
    page.goto(server.url + "/")
    page.wait_for_selector("#model option", state="attached")
    page.fill("#prompt", "What is on the farm?")
    page.press("#prompt", "Enter")
    expect(page.locator(".message.assistant .text")).to_have_text("The farm has a barn.")
    discovery, listing = page.locator(".card.tool").all()
    expect(discovery).to_have_class("card tool discovery")
    expect(discovery.locator("header")).to_contain_text("JIT discovery")
    expect(discovery.locator(".result-slot")).to_contain_text("fs:list_directory")
    expect(listing.locator("header")).to_contain_text("fs · list_directory")
    expect(listing.locator(".result")).to_contain_text("[FILE] barn.txt")
    page.context.close()
    assert watched.errors == [], watched.errors
