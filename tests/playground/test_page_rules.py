"""The page's own rules, over plain HTTP and in chromium: a strict Content-Security-Policy,
files served from a fixed list only, the server's own origin let through the browser guard
(and no other), and the API key asked for when the server wants one."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Browser, expect
from tests.playground.conftest import Playground
from tests.support.browser import watched_page
from tests.support.live import LiveServer, scripted_config
from tests.support.real_servers import free_port

from farmhand.assembly import create_app
from farmhand.providers.scripted import ScriptedProvider, Step
from farmhand.server.playground_files import ASSETS


def test_the_page_and_its_files_carry_a_strict_policy(playground: Playground) -> None:
    url = playground.server.url
    page = httpx.get(url + "/")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    policy = page.headers["content-security-policy"]
    assert "script-src 'self'" in policy and "default-src 'none'" in policy
    assert "unsafe" not in policy and "http" not in policy
    total = 0
    for name in ASSETS:
        reply = httpx.get(f"{url}/playground/{name}")
        assert reply.status_code == 200, name
        assert reply.headers["x-content-type-options"] == "nosniff"
        total += len(reply.content)
    assert total < 300_000  # the budget for the page's own JS and CSS


@pytest.mark.parametrize("name", ["../app.py", "..%2fapp.py", "index.html.bak", "nope.js"])
def test_no_other_file_is_served(playground: Playground, name: str) -> None:
    reply = httpx.get(f"{playground.server.url}/playground/{name}")
    assert reply.status_code == 404
    assert "no file" in reply.text or "no such endpoint" in reply.text


def test_the_servers_own_origin_passes_the_guard_and_others_do_not(
    playground: Playground,
) -> None:
    url = playground.server.url
    own = {"Origin": url}
    other = {"Origin": f"http://127.0.0.1:{free_port()}"}
    assert httpx.get(url + "/api/mcp/servers", headers=own).status_code == 200
    assert httpx.get(url + "/api/mcp/servers", headers=other).status_code == 403
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    accept = {"Accept": "application/json, text/event-stream"}
    assert httpx.post(url + "/mcp", json=ping, headers={**own, **accept}).status_code != 403
    assert httpx.post(url + "/mcp", json=ping, headers={**other, **accept}).status_code == 403
    # The Host is still checked first: a rebinding page's own origin is refused.
    rebound = {"Host": "evil.example", "Origin": "http://evil.example"}
    assert httpx.get(url + "/api/mcp/servers", headers=rebound).status_code == 421


def test_hand_calls_refuse_unknown_servers_and_bad_bodies(playground: Playground) -> None:
    url = playground.server.url + "/api/mcp/call"
    unknown = httpx.post(url, json={"server": "nope", "tool": "x"})
    assert unknown.status_code == 404 and "GET /api/mcp/servers" in unknown.json()["error"]
    for body, says in [
        ({"server": "fs"}, "tool must be"),
        ({"server": "fs", "tool": "read_text_file", "arguments": []}, "arguments must be"),
        ({"server": "fs", "tool": "x", "approved": "yes"}, "approved must be"),
        ({"server": "fs", "tool": "x", "extra": 1}, "unknown field"),
    ]:
        reply = httpx.post(url, json=body)
        assert reply.status_code == 400 and says in reply.json()["error"], reply.text


@pytest.fixture
def keyed(tmp_path: Path) -> Iterator[tuple[LiveServer, ScriptedProvider]]:
    script = ScriptedProvider([Step.text("Hello behind the gate.")])
    app = create_app(
        scripted_config(), home=tmp_path, provider_factory=lambda _: script, api_keys=["sekret"]
    )
    with LiveServer(app) as server:
        yield server, script
    script.assert_done()


def test_the_page_asks_for_the_api_key_and_keeps_it_for_the_tab(
    browser: Browser, keyed: tuple[LiveServer, ScriptedProvider]
) -> None:
    server, _ = keyed
    watched = watched_page(browser)
    page = watched.page
    page.goto(server.url + "/")
    dialog = page.locator("#key-dialog")
    expect(dialog).to_be_visible()
    page.fill("#key-input", "sekret")
    page.click("#key-form button")
    expect(page.locator("#model option")).to_have_text(["farm"])
    page.fill("#prompt", "hello")
    page.press("#prompt", "Enter")
    expect(page.locator(".message.assistant .text")).to_have_text("Hello behind the gate.")
    assert page.evaluate("sessionStorage.getItem('farmhand.apiKey')") == "sekret"
    assert page.evaluate("localStorage.length") == 0
    # The 401s that made the page ask are the only errors its console saw.
    assert all("401" in error for error in watched.errors), watched.errors
    page.context.close()
