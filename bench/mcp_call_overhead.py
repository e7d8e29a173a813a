"""A tool call through farmhand's MCP pool vs the SDK's own Client, on the same server.

Claim: farmhand's pooled MCP toolset (persistent session, restart bookkeeping, idle timer,
timeout scope, result-to-text conversion) costs at most 10% over calling the SDK directly:
target farmhand/raw <= 1.1.

Baseline: the official SDK's `Client.call_tool` (`mcp.Client`, the same class farmhand wraps)
on a session opened once, with no farmhand code in the path. Over stdio each side starts its
own process of the same server program (a stdio process has one client); over streamable
HTTP both sides talk to one server process.

Method: the test suite's Python server (tests/toolsets/mcp/servers/faults_server.py, the SDK's
MCPServer; over HTTP in stateless mode), tool `echo` with a short text. After `--warmup`
untimed calls each, `--calls` alternating pairs (raw, farmhand, raw, ...), each call timed
with perf_counter; medians are reported, and the ratio of the medians.

Run: .venv/bin/python bench/mcp_call_overhead.py [--calls 500] [--warmup 50]

Timings are printed, never asserted; on a busy machine read them as rough.
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from farmhand.config.models import McpServerConfig
from farmhand.toolsets.mcp.pool import MCPPool

SERVER = Path(__file__).resolve().parent.parent / "tests/toolsets/mcp/servers/faults_server.py"
ARGS = {"text": "hello from the benchmark"}


async def measure(
    raw: Callable[[], Awaitable[object]], ours: Callable[[], Awaitable[object]], calls: int
) -> tuple[float, float]:
    raw_times: list[float] = []
    our_times: list[float] = []
    for _ in range(calls):
        for call, times in ((raw, raw_times), (ours, our_times)):
            start = time.perf_counter()
            await call()
            times.append(time.perf_counter() - start)
    return statistics.median(raw_times), statistics.median(our_times)


async def compare(
    label: str,
    raw_target: StdioServerParameters | str,
    server: McpServerConfig,
    args: argparse.Namespace,
) -> None:
    async with Client(raw_target) as client, MCPPool() as pool:
        toolset = pool.toolset(server)

        async def raw() -> object:
            return await client.call_tool("echo", ARGS)

        async def ours() -> object:
            return await toolset.call_tool("echo", ARGS)

        await measure(raw, ours, args.warmup)
        raw_median, our_median = await measure(raw, ours, args.calls)
    print(
        f"{label:<6} raw SDK {raw_median * 1e6:8.0f} us   farmhand {our_median * 1e6:8.0f} us"
        f"  farmhand/raw {our_median / raw_median:5.2f}x (median of {args.calls}; target <= 1.10)"
    )


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def start_http_server(port: int) -> subprocess.Popen[bytes]:
    process = subprocess.Popen(
        [sys.executable, str(SERVER), "--http", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return process
        if process.poll() is not None:
            break
        time.sleep(0.05)
    os.killpg(process.pid, signal.SIGKILL)
    raise SystemExit(f"the HTTP test server did not start on port {port}")


async def main(args: argparse.Namespace) -> None:
    print(f"MCP tool call overhead: farmhand pool vs SDK Client, tool echo on {SERVER.name}")
    stdio = StdioServerParameters(command=sys.executable, args=[str(SERVER)])
    server = McpServerConfig(name="bench", command=sys.executable, args=[str(SERVER)])
    await compare("stdio", stdio, server, args)

    port = free_port()
    process = start_http_server(port)
    try:
        url = f"http://127.0.0.1:{port}/mcp"
        http = McpServerConfig(name="bench", transport="http", base_url=url)
        await compare("http", url, http, args)
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(10)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=500, help="timed calls per side")
    parser.add_argument("--warmup", type=int, default=50, help="untimed calls per side first")
    anyio.run(main, parser.parse_args())
