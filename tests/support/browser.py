"""Debian's chromium driven by Playwright for Python, headless, for the playground tests.

No browser is downloaded (Playwright's own builds need the network): Playwright is pointed
at the `chromium` package the set-up installs (scripts/setup.sh), with `executable_path`.
Every page records the console errors and uncaught exceptions it saw, so a test can check
that there were none.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from playwright.sync_api import Browser, ConsoleMessage, Page, sync_playwright

CHROMIUM = "chromium"


def chromium_path() -> str:
    found = shutil.which(CHROMIUM)
    if found is None:
        raise RuntimeError(
            "Debian's chromium is not installed; `make setup` installs it"
            " (apt-get install -y chromium)"
        )
    return found


@contextmanager
def headless_chromium() -> Iterator[Browser]:
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium_path(), headless=True)
        try:
            yield browser
        finally:
            browser.close()


@dataclass
class Watched:
    """A page and what went wrong in it: console errors and uncaught exceptions."""

    page: Page
    errors: list[str] = field(default_factory=list)

    def on_console(self, message: ConsoleMessage) -> None:
        if message.type == "error":
            self.errors.append(f"console: {message.text}")


def watched_page(browser: Browser, *, bypass_csp: bool = False) -> Watched:
    context = browser.new_context(viewport={"width": 1280, "height": 820}, bypass_csp=bypass_csp)
    page = context.new_page()
    watched = Watched(page)
    page.on("console", watched.on_console)
    page.on("pageerror", lambda exc: watched.errors.append(f"page error: {exc}"))
    return watched


def screenshot_dir(default: Path) -> Path:
    """Where the tests keep their screenshots: $FARMHAND_SCREENSHOTS, else `default`."""
    folder = Path(os.environ.get("FARMHAND_SCREENSHOTS") or default)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


AXE = Path(__file__).parents[2] / "node_modules" / "axe-core" / "axe.min.js"


def serious_violations(page: Page) -> list[str]:
    """axe-core's scan of the page as it is now (the page's context must bypass its CSP
    to take the injected script): every violation of impact serious or critical."""
    if not AXE.is_file():
        raise RuntimeError("axe-core is not installed; `make setup` installs it from npm")
    page.add_script_tag(path=str(AXE))
    results = page.evaluate("axe.run(document, {resultTypes: ['violations']})")
    return [
        f"{v['id']} ({v['impact']}): {v['help']} at {[n['target'] for n in v['nodes']]}"
        for v in results["violations"]
        if v["impact"] in ("serious", "critical")
    ]
