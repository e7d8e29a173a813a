"""Keeps web pages out: every route answers only to the Host names the operator expects and
to no browser origin the operator has not listed.

A page the user visits can send requests to `http://127.0.0.1:<port>` (a "simple" POST needs
no CORS preflight), and through DNS rebinding (its own hostname resolving to 127.0.0.1) it can
even read the replies. Both carry tell-tales farmhand checks before anything else runs:

- `Host` is the name the page used. Loopback names (localhost, 127.0.0.0/8, ::1) and
  `server.allowed_hosts` pass; anything else is 421, which ends DNS rebinding.
- `Origin` is sent by browsers on every cross-origin request that may change something (and
  on same-origin POSTs); non-browser clients send none. An origin not in
  `server.allowed_origins` is refused with 403. A request without Origin that a browser
  marked as cross-site (`Sec-Fetch-Site`, e.g. an `<img>` or `<script>` load) is refused too.

A page of this server's own origin (`scheme://Host`, the Host having passed the check
above) is let in: that is the playground at `/`. `/`, `/health` and the playground's
files stay open (liveness checks and static files carry no secrets). CORS headers are added, by
Starlette's CORSMiddleware inside this guard, only for the listed origins.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from dataclasses import dataclass

from starlette.types import ASGIApp, Receive, Scope, Send

from farmhand.errors import RequestError
from farmhand.server.dialect_registry import error_body_for_path
from farmhand.server.errors import error_response
from farmhand.server.playground_files import ASSET_PATHS, FAVICON_PATH

OPEN_PATHS = frozenset({"/", "/health", "/ready", FAVICON_PATH, *ASSET_PATHS})
"""Paths that answer whoever asks: liveness and readiness checks, and the playground's page
and files (public, static; the page asks for the API key before it calls anything)."""
LOOPBACK_NAMES = frozenset({"localhost", "localhost.localdomain"})


@dataclass(frozen=True)
class HostRule:
    """Which Host header values reach the API: loopback names on any port, and the
    operator's names (`name` for any port, `name:port` for one)."""

    any_port: frozenset[str] = frozenset()
    exact: frozenset[str] = frozenset()

    @classmethod
    def allowing(cls, hosts: Iterable[str]) -> HostRule:
        any_port: set[str] = set()
        exact: set[str] = set()
        for entry in hosts:
            entry = entry.strip().lower()
            if not entry:
                continue
            name, port = split_host(entry)
            if port is None:
                any_port.add(name)
            else:
                exact.add(f"{name}:{port}")
        return cls(frozenset(any_port), frozenset(exact))

    def allows(self, host_header: str) -> bool:
        name, port = split_host(host_header.strip().lower())
        if not name:
            return False
        if is_loopback_name(name) or name in self.any_port:
            return True
        return port is not None and f"{name}:{port}" in self.exact


def split_host(value: str) -> tuple[str, str | None]:
    """`name[:port]` or `[v6]:port` -> (name, port); an IPv6 name keeps its brackets."""
    if value.startswith("["):
        end = value.find("]")
        if end < 0:
            return "", None
        rest = value[end + 1 :]
        port = rest[1:] if rest.startswith(":") and rest[1:].isdigit() else None
        return value[: end + 1], port
    name, sep, port = value.rpartition(":")
    if sep and port.isdigit() and name:
        return name, port
    return value, None


def is_loopback_name(name: str) -> bool:
    if name in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(name.strip("[]")).is_loopback
    except ValueError:
        return False


def normalize_origin(origin: str) -> str:
    return origin.strip().rstrip("/").lower()


class BrowserGuard:
    """The outermost middleware: Host and Origin checks on every route but OPEN_PATHS."""

    def __init__(self, app: ASGIApp, *, hosts: HostRule, origins: Iterable[str] = ()) -> None:
        self.app = app
        self.hosts = hosts
        self.origins = frozenset(normalize_origin(o) for o in origins if o.strip())

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("path", "") in OPEN_PATHS:
            await self.app(scope, receive, send)
            return
        refusal = self.refusal(_headers(scope), scope.get("scheme", "http"))
        if refusal is None:
            await self.app(scope, receive, send)
            return
        path: str = scope.get("path", "")
        await error_response(refusal, error_body_for_path(path))(scope, receive, send)

    def refusal(self, headers: dict[str, str], scheme: str = "http") -> RequestError | None:
        host = headers.get("host")
        if host is None or not self.hosts.allows(host):
            return RequestError(
                f"Host {host!r} is not one this server answers to; use a loopback address"
                " (127.0.0.1, localhost), or the operator adds the name to"
                " server.allowed_hosts (farmhand serve --allowed-host)",
                code="host_not_allowed",
                status=421,
            )
        origin = headers.get("origin")
        if origin is not None:
            # The server's own pages (the playground) come from the Host just checked.
            own = normalize_origin(f"{scheme}://{host}")
            if normalize_origin(origin) not in self.origins | {own}:
                return RequestError(
                    f"requests from web pages are refused (Origin {origin!r}); the operator"
                    " can let a page in by listing its origin in server.allowed_origins",
                    code="origin_not_allowed",
                    status=403,
                )
        elif headers.get("sec-fetch-site") in ("cross-site", "same-site"):
            return RequestError(
                "a request a browser made for another site's page is refused; the operator"
                " can let a page in by listing its origin in server.allowed_origins",
                code="origin_not_allowed",
                status=403,
            )
        return None


def _headers(scope: Scope) -> dict[str, str]:
    """The headers this guard reads (the first of each), decoded leniently."""
    wanted = {b"host", b"origin", b"sec-fetch-site"}
    found: dict[str, str] = {}
    for name, value in scope.get("headers", []):
        if name in wanted and name.decode() not in found:
            found[name.decode()] = value.decode("latin-1")
    return found
