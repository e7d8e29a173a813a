"""How long a tool list is trusted: the server's `ttlMs`/`cacheScope` on 2026-07-28
(SEP-2549), the fixed default where it says nothing (the handshake revisions). The server
is the SDK's own MCPServer, in process, counting how often it is asked for its tools."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from mcp.server.caching import CacheHint
from mcp.server.mcpserver import MCPServer

from farmhand.toolsets.mcp.connection import ServerConnection
from farmhand.toolsets.mcp.tool_lists import DEFAULT_TTL
from farmhand.toolsets.mcp.transports import ServerTarget

pytestmark = pytest.mark.anyio


class CountingServer(MCPServer):
    listings = 0

    async def list_tools(self) -> Any:
        self.listings += 1
        return await super().list_tools()


def counting(hint: CacheHint | None) -> CountingServer:
    server = CountingServer("lists", cache_hints={"tools/list": hint} if hint else None)

    @server.tool()
    def echo(text: str) -> str:
        """Return the text."""
        return text

    return server


async def listed_twice(server: CountingServer, mode: str = "auto") -> ServerConnection:
    connection = ServerConnection("lists", ServerTarget(lambda: server, "in process"), mode=mode)
    async with anyio.create_task_group() as group:
        await group.start(connection.run)
        try:
            for _ in range(2):
                assert [t.name for t in await connection.tools(10)] == ["echo"]
        finally:
            connection.close()
    return connection


async def test_a_list_that_is_stale_at_once_is_fetched_every_time() -> None:
    server = counting(CacheHint(ttl_ms=0))
    connection = await listed_twice(server)
    assert connection.protocol_version == "2026-07-28"
    assert server.listings == 2
    assert connection.tool_list is not None and connection.tool_list.ttl == 0
    assert connection.tool_list.scope == "private"


async def test_a_list_the_server_lets_live_an_hour_is_fetched_once() -> None:
    server = counting(CacheHint(ttl_ms=3_600_000, scope="public"))
    connection = await listed_twice(server)
    assert server.listings == 1
    assert connection.tool_list is not None
    assert (connection.tool_list.ttl, connection.tool_list.scope) == (3600, "public")


async def test_a_ttl_beyond_a_day_is_capped_at_a_day() -> None:
    connection = await listed_twice(counting(CacheHint(ttl_ms=10 * 86_400_000)))
    assert connection.tool_list is not None and connection.tool_list.ttl == 86_400


async def test_a_server_on_the_handshake_revision_keeps_the_default() -> None:
    server = counting(CacheHint(ttl_ms=0))  # not sent on the 2025-11-25 wire
    connection = await listed_twice(server, mode="legacy")
    assert connection.protocol_version == "2025-11-25"
    assert server.listings == 1
    assert connection.tool_list is not None
    assert (connection.tool_list.ttl, connection.tool_list.scope) == (DEFAULT_TTL, None)
