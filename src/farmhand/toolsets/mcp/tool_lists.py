"""A server's tool list and how long it may be trusted.

On protocol 2026-07-28 a list result says so itself (SEP-2549): `ttlMs` (0: stale at once;
capped at the SDK's 24 hours) and `cacheScope` (`public` may be shared across
authorization contexts, `private` not). farmhand never shares a list between connections,
and the pool keys a connection by the server's whole config (its headers and login
included), so a private list is only ever reused by the credentials that fetched it. A
server that says nothing (the handshake revisions) is trusted for `DEFAULT_TTL`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Literal

from mcp import Client, types
from mcp.client.caching import MAX_TTL_MS

DEFAULT_TTL = 300.0
"""Seconds a tool list is trusted when the server gives no `ttlMs`."""
MAX_PAGES = 100
"""A server whose pages never end cannot hang the listing."""


@dataclass(frozen=True)
class ToolList:
    tools: list[types.Tool]
    fetched_at: float
    """time.monotonic() when it was fetched."""
    ttl: float = DEFAULT_TTL
    """Seconds it stays fresh: the server's `ttlMs` (the smallest of its pages), else
    DEFAULT_TTL."""
    scope: Literal["public", "private"] | None = None
    """The server's `cacheScope` (None: it said nothing)."""

    def fresh(self, now: float | None = None) -> bool:
        return (now if now is not None else time.monotonic()) - self.fetched_at < self.ttl


async def fetch_tools(client: Client) -> ToolList:
    """Every page of the server's tools, bypassing the SDK's own response cache (the
    connection keeps the list, and refreshes it on a change event)."""
    tools: list[types.Tool] = []
    ttls: list[int] = []
    scopes: set[str] = set()
    cursor: str | None = None
    for _ in range(MAX_PAGES):
        page = await client.list_tools(cursor=cursor, cache_mode="bypass")
        tools.extend(page.tools)
        if "ttl_ms" in page.model_fields_set:  # said by the server, not the model's default
            ttls.append(min(page.ttl_ms, MAX_TTL_MS))
        if "cache_scope" in page.model_fields_set:
            scopes.add(page.cache_scope)
        cursor = page.next_cursor
        if not cursor:
            break
    scope: Literal["public", "private"] | None = None
    if scopes:
        scope = "public" if scopes == {"public"} else "private"  # one private page: all private
    ttl = min(ttls) / 1000 if ttls else DEFAULT_TTL
    return ToolList(tools, time.monotonic(), ttl, scope)
