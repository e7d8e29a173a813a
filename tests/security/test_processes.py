"""Attacks 6 and 9: a server one client wedges, and children that outlive farmhand.

A pooled server whose calls keep timing out is restarted (a new process), so it does not
stay "connected" and useless for everyone. And when farmhand is SIGKILLed, no process a
server started survives it, not even one that detached into a session of its own.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import anyio
import pytest
from tests.support.real_servers import alive, faults

from farmhand.toolsets.mcp.connection import TIMEOUTS_BEFORE_RESTART
from farmhand.toolsets.mcp.pool import MCPPool

ROOT = Path(__file__).parents[2]


@pytest.mark.anyio
async def test_a_server_whose_calls_keep_timing_out_is_restarted() -> None:
    # Only the hanging calls get the short limit: on a loaded CI machine a quick call can
    # take longer than 0.3 s, and the test is about the restart, not about speed.
    async with MCPPool(call_timeout=0.3) as pool:
        toolset = pool.toolset(faults())
        before = int((await toolset.call_tool("pid", {}, timeout=30)).text)
        for _ in range(TIMEOUTS_BEFORE_RESTART):
            result = await toolset.call_tool("hang", {"seconds": 60})
            assert result.is_error and "did not answer" in result.text
        after = int((await toolset.call_tool("pid", {}, timeout=30)).text)
        assert after != before
        with anyio.fail_after(10):
            while alive(before):  # the old process group was killed
                await anyio.sleep(0.05)


@pytest.mark.anyio
async def test_one_client_cannot_take_every_call_slot_of_a_server() -> None:
    async with MCPPool(call_timeout=5, max_concurrent_calls=2) as pool:
        toolset = pool.toolset(faults())
        await toolset.call_tool("pid", {})
        async with anyio.create_task_group() as group:
            for _ in range(2):
                group.start_soon(toolset.call_tool, "hang", {"seconds": 1})
            await anyio.sleep(0.2)
            slots = pool.connections[0].call_slots
            assert slots.value == 0  # both taken; a third caller waits within its timeout
        assert slots.value == 2


def test_nothing_a_server_started_survives_a_sigkilled_farmhand() -> None:
    holder = subprocess.Popen(
        [sys.executable, "-m", "tests.security.holder"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None
        child, detached = (int(pid) for pid in holder.stdout.readline().split())
        assert alive(child) and alive(detached)
        os.kill(holder.pid, signal.SIGKILL)
        holder.wait(timeout=10)
        deadline = time.monotonic() + 15
        while (alive(child) or alive(detached)) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not alive(child), "the server's child outlived farmhand"
        assert not alive(detached), "a detached grandchild outlived farmhand"
    finally:
        holder.kill()
