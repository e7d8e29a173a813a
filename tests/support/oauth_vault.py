"""The OAuth-protected MCP server of tests/toolsets/mcp/servers/oauth_server.py, running,
and a browser whose user allows every login."""

from __future__ import annotations

import socket
import sys
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from urllib.parse import parse_qs, urlencode, urlsplit, urlunsplit

import httpx
from tests.support.real_servers import SERVERS, free_port, listening, wait_until

Show = Callable[[str], Awaitable[None]]


class Vault:
    """The running authorization server (`issuer`) and resource server (`url`)."""

    def __init__(self, issuer: str, url: str, sse_url: str) -> None:
        self.issuer, self.url, self.sse_url = issuer, url, sse_url

    def counts(self) -> dict[str, int]:
        found: dict[str, int] = httpx.get(f"{self.issuer}/test/counts").json()
        return found

    def expire_all(self) -> None:
        httpx.post(f"{self.issuer}/test/expire").raise_for_status()


@contextmanager
def running_vault() -> Iterator[Vault]:
    ports = [free_port(), free_port(), free_port()]
    command = [sys.executable, str(SERVERS / "oauth_server.py"), *map(str, ports)]
    with listening(command, ports[1]) as url:
        assert wait_until(lambda: all(accepts(p) for p in ports), timeout=20), "all three"
        issuer, sse = (f"http://127.0.0.1:{p}" for p in (ports[0], ports[2]))
        yield Vault(issuer, f"{url}/mcp", f"{sse}/sse")


def accepts(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


def allow(url: str) -> None:
    """What the browser does for a user who allows the login (synchronous)."""
    answer = httpx.get(url)
    assert answer.status_code in (302, 303, 307), answer.text
    httpx.get(answer.headers["location"]).raise_for_status()


def browser(
    tamper: Callable[[dict[str, str]], None] | None = None, seen: list[str] | None = None
) -> Show:
    """A browser whose user allows the login: it opens the URL and follows the redirect
    back to the loopback callback (after `tamper` had its way with the parameters)."""

    async def show(url: str) -> None:
        if seen is not None:
            seen.append(url)
        async with httpx.AsyncClient() as http:
            answer = await http.get(url)
            assert answer.status_code in (302, 303, 307), answer.text
            back = urlsplit(answer.headers["location"])
            params = {k: v[0] for k, v in parse_qs(back.query).items()}
            if tamper is not None:
                tamper(params)
            await http.get(urlunsplit(back._replace(query=urlencode(params))))

    return show
