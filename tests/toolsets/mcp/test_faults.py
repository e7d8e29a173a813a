"""Faults against our own real stdio server: crashes, hangs, huge output, no zombies."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

import anyio
import pytest
from tests.support.real_servers import alive, faults

from farmhand.config.models import McpServerConfig
from farmhand.errors import ToolServerError
from farmhand.toolsets.mcp.client import MCPToolset

pytestmark = pytest.mark.anyio


async def test_a_crash_mid_call_is_an_error_result_and_the_next_call_restarts() -> None:
    async with MCPToolset.from_config(faults()) as toolset:
        await toolset.list_tools()
        first = int((await toolset.call_tool("pid", {})).text)
        crashed = await toolset.call_tool("crash", {})  # not read-only: never retried
        assert crashed.is_error
        assert "faults:crash failed: the MCP server stopped during the call" in crashed.text
        assert "restarted on the next call" in crashed.text
        second = int((await toolset.call_tool("pid", {})).text)
        assert (await toolset.call_tool("echo", {"text": "still here"})).text == "still here"
        assert toolset.connection.restarts == 1
    assert first != second
    assert not alive(first) and not alive(second)


async def test_a_read_only_call_is_retried_once_after_the_restart(tmp_path: Path) -> None:
    marker = str(tmp_path / "crashed-once")
    async with MCPToolset.from_config(faults()) as toolset:
        await toolset.list_tools()  # annotations tell which tools are safe to repeat
        result = await toolset.call_tool("crash_once", {"marker": marker})
    assert not result.is_error and result.text == "survived"


async def test_a_server_killed_between_calls_is_restarted_for_the_next_call() -> None:
    async with MCPToolset.from_config(faults()) as toolset:
        await toolset.list_tools()
        pid = int((await toolset.call_tool("pid", {})).text)
        os.kill(pid, signal.SIGKILL)
        echoed = await toolset.call_tool("echo", {"text": "back"})  # read-only: may retry
        assert not echoed.is_error and echoed.text == "back"
        assert int((await toolset.call_tool("pid", {})).text) != pid


async def test_a_hung_call_times_out_and_the_server_stays_usable() -> None:
    async with MCPToolset.from_config(faults(tool_timeout=0.5)) as toolset:
        hung = await toolset.call_tool("hang", {"seconds": 60})
        assert hung.is_error
        assert hung.text == (
            "faults:hang did not answer within 0.5 s and was cancelled;"
            " try a smaller request, or another tool"
        )
        assert (await toolset.call_tool("echo", {"text": "ok"})).text == "ok"
        # a per-call timeout overrides the server's
        assert (await toolset.call_tool("hang", {"seconds": 0.6}, timeout=10)).text == "woke up"
        assert toolset.connection.restarts == 0


async def test_huge_output_arrives_whole() -> None:
    size = 4_000_000
    async with MCPToolset.from_config(faults()) as toolset:
        big = await toolset.call_tool("huge", {"size": size})
    assert len(big.text) == size and big.text.endswith("end")


async def test_children_of_the_server_are_killed_on_close() -> None:
    async with MCPToolset.from_config(faults()) as toolset:
        server = int((await toolset.call_tool("pid", {})).text)
        child = int((await toolset.call_tool("spawn_child", {})).text)
        assert alive(child)
    assert not alive(server)
    with anyio.fail_after(5):  # SIGKILL is delivered at once; the reaper may lag a moment
        while alive(child):
            await anyio.sleep(0.02)


async def test_children_of_a_crashed_server_are_killed_too() -> None:
    async with MCPToolset.from_config(faults()) as toolset:
        child = int((await toolset.call_tool("spawn_child", {})).text)
        assert (await toolset.call_tool("crash", {})).is_error
        await toolset.call_tool("echo", {"text": "restarted"})
        with anyio.fail_after(5):
            while alive(child):
                await anyio.sleep(0.02)


async def test_a_server_that_keeps_failing_reports_each_time_and_backs_off() -> None:
    async with MCPToolset.from_config(faults()) as toolset:
        await toolset.list_tools()
        connection = toolset.connection
        # break the command for restarts: the next start fails like a missing program would
        connection.target.open = _failing_start
        assert (await toolset.call_tool("crash", {})).is_error
        for _ in range(2):
            with pytest.raises(ToolServerError, match="failed to restart"):
                await toolset.call_tool("echo", {"text": "x"})
        assert connection.failures >= 3


def _failing_start() -> object:
    raise OSError("no such program")


async def test_calls_in_flight_during_a_crash_fail_and_one_restart_serves_the_rest(
    tmp_path: Path,
) -> None:
    started = tmp_path / "hang-started"
    async with MCPToolset.from_config(faults()) as toolset:
        await toolset.list_tools()
        results: dict[str, str] = {}

        async def call(name: str, arguments: dict[str, object]) -> None:
            output = await toolset.call_tool(name, arguments)
            results[name] = "error" if output.is_error else output.text

        async with anyio.create_task_group() as group:
            group.start_soon(call, "hang", {"seconds": 30, "started": str(started)})
            with anyio.fail_after(10):  # the hang is running in the server before it crashes
                while not started.exists():
                    await anyio.sleep(0.01)
            group.start_soon(call, "crash", {})
        assert results == {"hang": "error", "crash": "error"}

        async with anyio.create_task_group() as group:
            for _ in range(4):
                group.start_soon(call, "echo", {"text": "again"})
        assert results["echo"] == "again"
        assert toolset.connection.restarts == 1


async def test_a_server_that_never_answers_is_given_up_at_the_connect_timeout(
    tmp_path: Path,
) -> None:
    pid_file = tmp_path / "pid"
    silent = (
        f"import os, time; open({str(pid_file)!r}, 'w').write(str(os.getpid())); time.sleep(60)"
    )
    server = McpServerConfig(name="silent", command=sys.executable, args=["-c", silent])
    with pytest.raises(
        ToolServerError, match=r"MCP server 'silent' \(.*\) did not answer within 1 s"
    ):
        async with MCPToolset.from_config(server, connect_timeout=1):
            pass
    assert not alive(int(pid_file.read_text()))
