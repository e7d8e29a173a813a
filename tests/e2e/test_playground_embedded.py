"""The main job in the playground: a real `farmhand serve` with the embedded default model
and the filesystem MCP server over a folder holding a copy of examples/ (the server reads a
relative path such as "examples" inside the folder it was given), the question typed into
the page in headless chromium; the model lists the folder (a card with the listing) and
answers."""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, expect
from tests.support.browser import headless_chromium, screenshot_dir, watched_page
from tests.support.real_servers import free_port
from tests.support.serve_process import serving

from farmhand.toolsets.mcp.known_servers import FILESYSTEM_BIN, FILESYSTEM_PACKAGE, find_node_server

pytestmark = pytest.mark.e2e

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
QUESTION = "List the files in the examples folder."
MINUTES = 60_000
LISTING = re.compile(r"filesystem · (list_directory|list_directory_with_sizes|directory_tree)")


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with headless_chromium() as browser:
        yield browser


def test_the_embedded_model_lists_the_examples_folder_in_the_page(
    tmp_path: Path, browser: Browser
) -> None:
    shutil.copytree(EXAMPLES, tmp_path / "examples")
    server = find_node_server(FILESYSTEM_BIN, FILESYSTEM_PACKAGE)
    (tmp_path / "farmhand.yaml").write_text(
        f"mcp:\n  servers:\n    - name: filesystem\n      command: {server}\n"
        f"      args: [{tmp_path}]\n"
    )
    port = free_port()
    with serving("--port", str(port), cwd=tmp_path, env={"FARMHAND_API_KEYS": ""}):
        watched = watched_page(browser)
        page = watched.page
        page.goto(f"http://127.0.0.1:{port}/")
        page.wait_for_selector("#tools .tool-entry")
        page.fill("#prompt", QUESTION)
        page.press("#prompt", "Enter")
        card = page.locator(".card.tool").first
        expect(card.locator(".badge")).to_have_text("completed", timeout=10 * MINUTES)
        expect(card.locator("header")).to_contain_text(LISTING)
        expect(card.locator(".result")).to_contain_text("shopping-list.md")
        expect(page.locator(".turn-stats")).to_be_visible(timeout=10 * MINUTES)
        answer = page.locator(".message.assistant .text").last
        for name in sorted(p.name for p in EXAMPLES.iterdir()):
            expect(answer).to_contain_text(name)
        page.screenshot(path=screenshot_dir(tmp_path / "shots") / "embedded-main-job.png")
        page.context.close()
        assert watched.errors == [], watched.errors
