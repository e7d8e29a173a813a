"""The pool: one persistent session per server, shared, cached, idled out, shut down."""

from __future__ import annotations

import anyio
import pytest
from tests.support.real_servers import alive, faults

from farmhand.errors import ToolServerError
from farmhand.toolsets.mcp.client import MCPToolset
from farmhand.toolsets.mcp.connection import ServerConnection
from farmhand.toolsets.mcp.pool import MCPPool
from farmhand.toolsets.mcp.transports import server_target

pytestmark = pytest.mark.anyio


async def test_toolsets_for_one_server_share_one_session() -> None:
    async with MCPPool() as pool:
        first, second = pool.toolset(faults()), pool.toolset(faults())
        pid = (await first.call_tool("pid", {})).text
        assert (await second.call_tool("pid", {})).text == pid  # the same process
        async with second:  # entering a pooled toolset changes nothing
            pass
        assert (await first.call_tool("pid", {})).text == pid
        other = pool.toolset(faults(name="other"))  # another config, another server
        assert (await other.call_tool("pid", {})).text != pid
        assert len(pool.connections) == 2
        pids = [int(pid), int((await other.call_tool("pid", {})).text)]
    assert not any(alive(p) for p in pids)


async def test_concurrent_first_calls_start_the_server_once() -> None:
    async with MCPPool() as pool:
        toolset = pool.toolset(faults())
        pids: list[str] = []

        async def call() -> None:
            pids.append((await toolset.call_tool("pid", {})).text)

        async with anyio.create_task_group() as group:
            for _ in range(5):
                group.start_soon(call)
    assert len(set(pids)) == 1


async def test_tool_list_is_cached_and_refreshed_when_the_server_says_it_changed() -> None:
    async with MCPPool() as pool:
        toolset = pool.toolset(faults())
        before = {t.name for t in await toolset.list_tools()}
        assert toolset.connection.protocol_version == "2026-07-28"  # changes by subscription
        assert await toolset.list_tools() == await toolset.list_tools()  # served from cache
        assert (await toolset.call_tool("add_tool", {"name": "fresh"})).text == "added"
        with anyio.fail_after(5):
            while "fresh" not in {t.name for t in await toolset.list_tools()}:
                await anyio.sleep(0.02)
        assert {t.name for t in await toolset.list_tools()} == before | {"fresh"}


async def test_a_handshake_era_session_refreshes_on_the_list_changed_notification() -> None:
    connection = ServerConnection("faults", server_target(faults()), mode="legacy")
    async with anyio.create_task_group() as group:
        group.start_soon(connection.run)
        toolset = MCPToolset.pooled(faults(), connection, call_timeout=10)
        assert "late" not in {t.name for t in await toolset.list_tools()}
        assert connection.protocol_version == "2025-11-25"
        await toolset.call_tool("add_tool", {"name": "late"})
        with anyio.fail_after(5):
            while "late" not in {t.name for t in await toolset.list_tools()}:
                await anyio.sleep(0.02)
        connection.close()
    assert connection.target.stderr is not None
    connection.target.stderr.close()


async def test_an_idle_session_is_closed_and_reopened_on_the_next_call() -> None:
    async with MCPPool(idle_timeout=0.3) as pool:
        toolset = pool.toolset(faults())
        pid = int((await toolset.call_tool("pid", {})).text)
        with anyio.fail_after(10):
            while alive(pid):
                await anyio.sleep(0.05)
        assert not toolset.connection.connected
        assert int((await toolset.call_tool("pid", {})).text) != pid


async def test_shutdown_closes_every_session_and_reaps_every_child() -> None:
    async with MCPPool() as pool:
        toolsets = [pool.toolset(faults(name=f"s{i}")) for i in range(3)]
        servers = [int((await t.call_tool("pid", {})).text) for t in toolsets]
        children = [int((await t.call_tool("spawn_child", {})).text) for t in toolsets]
        assert all(alive(p) for p in servers + children)
    assert not any(alive(p) for p in servers)
    with anyio.fail_after(5):
        while any(alive(p) for p in children):
            await anyio.sleep(0.02)


async def test_a_closed_pool_refuses_new_toolsets() -> None:
    pool = MCPPool()
    with pytest.raises(ToolServerError, match="not open"):
        pool.toolset(faults())
