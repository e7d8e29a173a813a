"""Issue 25, item 4 (partly): small requests that made the server do unbounded work, each
replayed over real uvicorn. Memory is measured as this process's peak RSS around the
request (the server runs in a thread of it); a bound shows as work refused with a 4xx
in the dialect's shape, or as sessions and files that are no longer there.

- One stored 1 MB item and 1,000 `item_reference`s to it (74 KB): +947 MiB.
- `/api/tools/search` with `"*a" * 400000`: 12.3 s of a blocked event loop.
- 10,000 `/mcp` initialize calls: +343 MiB, then 503 for every other client for 30 min.
- Cut tool results saved under FARMHAND_HOME/results for ever.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from tests.mcpserver.test_mcp_http import INITIALIZE, MCP_HEADERS
from tests.security.conftest import serve
from tests.support.farms import start
from tests.support.live import pantry_server, scripted_config

from farmhand.config.models import FarmhandConfig
from farmhand.messages import ToolCall
from farmhand.providers.scripted import ScriptedProvider, Step

MIB = 1024 * 1024


def peak_rss() -> int:
    """This process's peak resident memory since `reset_peak_rss`, in bytes."""
    status = Path("/proc/self/status").read_text()
    return int(re.search(r"VmHWM:\s+(\d+) kB", status).group(1)) * 1024  # type: ignore[union-attr]


def reset_peak_rss() -> None:
    Path("/proc/self/clear_refs").write_text("5")


def with_limits(config: FarmhandConfig, **sections: dict[str, Any]) -> FarmhandConfig:
    data = config.model_dump()
    for section, values in sections.items():
        outer, _, inner = section.partition(".")
        data[outer][inner].update(values)
    return FarmhandConfig.model_validate(data)


# item_reference


def test_references_to_a_large_stored_item_are_refused_before_they_expand(tmp_path: Path) -> None:
    server, model = serve(tmp_path)
    with server, httpx.Client(base_url=server.url, timeout=120) as http:
        big = {"role": "user", "content": "x" * MIB}
        stored = http.post("/v1/responses", json={"model": "farm", "input": [big]})
        assert stored.status_code == 200, stored.text
        listed = http.get(f"/v1/responses/{stored.json()['id']}/input_items").json()
        item_id = listed["data"][0]["id"]
        asked = len(model.turns)
        references = [{"type": "item_reference", "id": item_id}] * 1000
        body = {"model": "farm", "input": references, "store": False}
        assert len(httpx.Request("POST", "/", json=body).content) < 80_000

        reset_peak_rss()
        before = peak_rss()
        reply = http.post("/v1/responses", json=body)
        grown = peak_rss() - before

        assert reply.status_code == 400, reply.text
        error = reply.json()["error"]
        assert error["type"] == "invalid_request_error" and error["param"] == "input"
        assert "1000 item_reference items; at most 100" in error["message"]
        assert "server.limits.max_item_references" in error["message"]
        assert grown < 64 * MIB, f"peak RSS grew by {grown / MIB:.0f} MiB"
        assert len(model.turns) == asked  # the model was never asked

        # Within the count, the size they expand to is bounded too: 9 x 1 MB > 8 MiB.
        nine = {"model": "farm", "input": references[:9], "store": False}
        reply = http.post("/v1/responses", json=nine)
        assert reply.status_code == 400, reply.text
        assert "server.limits.max_reference_chars" in reply.json()["error"]["message"]
        assert len(model.turns) == asked
        # and references within both bounds still work
        two = {"model": "farm", "input": references[:2], "store": False}
        assert http.post("/v1/responses", json=two).status_code == 200
        assert len(model.turns) == asked + 1


# /api/tools/search


@pytest.fixture
def searched(tmp_path: Path) -> Iterator[str]:
    server, _ = serve(tmp_path, scripted_config(pantry_server()))
    with server:
        yield server.url


def test_a_huge_search_pattern_is_refused_before_any_matching(searched: str) -> None:
    hostile = "*a" * 400_000
    reply = httpx.post(f"{searched}/api/tools/search", json={"pattern": hostile}, timeout=120)
    assert reply.status_code == 400, reply.text[:300]
    message = reply.json()["error"]
    assert "pattern is 800000 characters long" in message
    assert "server.limits.max_search_pattern_chars" in message

    many = "*a" * 20  # short, but 20 wildcards
    reply = httpx.post(f"{searched}/api/tools/search", json={"pattern": many}, timeout=60)
    assert reply.status_code == 400, reply.text
    assert "20 wildcards" in reply.json()["error"]
    assert "server.limits.max_search_wildcards" in reply.json()["error"]

    fine = httpx.post(f"{searched}/api/tools/search", json={"pattern": "*ech?"}, timeout=60)
    assert fine.status_code == 200, fine.text
    assert [t["name"] for t in fine.json()["tools"]] == ["pantry:echo"]


# /mcp sessions

PING = {"jsonrpc": "2.0", "id": 2, "method": "ping"}


class McpClient:
    def __init__(self, url: str, key: str) -> None:
        headers = {**MCP_HEADERS, "Authorization": f"Bearer {key}"}
        self.http = httpx.Client(base_url=url, headers=headers, timeout=60)

    def open(self) -> httpx.Response:
        return self.http.post("/mcp", json=INITIALIZE)

    def session(self) -> str:
        reply = self.open()
        assert reply.status_code == 200, reply.text
        return reply.headers["mcp-session-id"]

    def ping(self, session: str) -> int:
        return self.http.post("/mcp", json=PING, headers={"mcp-session-id": session}).status_code


def test_one_client_opening_sessions_in_a_loop_only_replaces_its_own(tmp_path: Path) -> None:
    server, _ = serve(tmp_path, keys=["attacker", "victim"])
    with server:
        victim = McpClient(server.url, "victim")
        attacker = McpClient(server.url, "attacker")
        kept = victim.session()
        opened = [attacker.session() for _ in range(300)]
        # The attacker holds its 8 most recent sessions; the 292 before were closed.
        assert [attacker.ping(s) for s in opened[-8:]] == [200] * 8
        assert {attacker.ping(s) for s in opened[:-8]} == {404}
        # The other client was never touched, and can open more.
        assert victim.ping(kept) == 200
        assert victim.ping(victim.session()) == 200


def test_when_all_sessions_are_taken_the_least_recently_used_makes_room(tmp_path: Path) -> None:
    config = with_limits(scripted_config(), **{"server.mcp_sessions": {"max_total": 3}})
    server, _ = serve(tmp_path, config, keys=["a", "b", "c"])
    with server:
        a, b, c = (McpClient(server.url, key) for key in "abc")
        first, second = a.session(), b.session()
        assert a.ping(first) == 200  # used last: `second` is now the least recently used
        third = c.session()
        fourth = c.session()
        assert (a.ping(first), b.ping(second), c.ping(third), c.ping(fourth)) == (
            200,
            404,
            200,
            200,
        )


def test_an_idle_session_is_closed(tmp_path: Path) -> None:
    config = with_limits(scripted_config(), **{"server.mcp_sessions": {"idle_timeout": 0.2}})
    server, _ = serve(tmp_path, config, keys=["k"])
    with server:
        client = McpClient(server.url, "k")
        idle = client.session()
        # Any request on it restarts a session's idle time: leave it alone while the clock
        # passes its timeout (the server is asked something else meanwhile).
        quiet_until = time.monotonic() + 1.0
        while time.monotonic() < quiet_until:
            assert client.http.get("/health").status_code == 200
        assert client.ping(idle) == 404
        assert client.ping(client.session()) == 200


# Saved results


def test_saved_results_stay_within_their_cap(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FARMHAND_HOME", str(tmp_path / "home"))
    config = with_limits(
        scripted_config(pantry_server()),
        **{
            "runtime.saved_results": {"max_bytes": 7000},
        },
    )
    data = config.model_dump()
    data["runtime"]["max_tool_result_chars"] = 500
    server, relay = start(tmp_path / "state", FarmhandConfig.model_validate(data))
    results = tmp_path / "home" / "results"
    with server, httpx.Client(base_url=server.url, timeout=60) as http:
        relay.script = ScriptedProvider()
        for n in range(5):
            long_text = str(n) * 3000
            relay.script.add(
                Step.calls(ToolCall("pantry:echo", {"text": long_text}, f"call_{n}")),
                Step.text("done"),
            )
            body = {"model": "farm", "messages": [{"role": "user", "content": "echo"}]}
            reply = http.post("/v1/chat/completions", json=body)
            assert reply.status_code == 200, reply.text
        relay.script.assert_done()
        saved = sorted(results.iterdir())
        assert sum(p.stat().st_size for p in saved) <= 7000
        assert {p.read_text()[0] for p in saved} == {"3", "4"}  # the newest two

        # A result larger than the whole cap is not saved, and the model is told why.
        seen: list[str] = []
        relay.script.add(
            Step.calls(ToolCall("pantry:echo", {"text": "9" * 8000}, "call_big")),
            Step.text("done", expect=lambda messages, _: seen.append(messages[-1].content)),
        )
        body = {"model": "farm", "messages": [{"role": "user", "content": "echo"}]}
        assert http.post("/v1/chat/completions", json=body).status_code == 200
        assert "runtime.saved_results.max_bytes (7000)" in seen[0]
        assert sorted(results.iterdir()) == saved
