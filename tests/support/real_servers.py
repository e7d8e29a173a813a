"""Real MCP servers for the MCP client tests: paths, free ports, and process checks."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from farmhand.config.models import McpServerConfig
from farmhand.toolsets.mcp.known_servers import find_node_server

SERVERS = Path(__file__).parents[1] / "toolsets" / "mcp" / "servers"
FAULTS = str(SERVERS / "faults_server.py")
LOCALHOST_ONLY = str(SERVERS / "listen_localhost.js")


def faults(*extra: str, name: str = "faults", **settings: object) -> McpServerConfig:
    return McpServerConfig.model_validate(
        {"name": name, "command": sys.executable, "args": [FAULTS, *extra], **settings}
    )


def everything_bin() -> str:
    return find_node_server("mcp-server-everything", "@modelcontextprotocol/server-everything")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def alive(pid: int) -> bool:
    """Whether the process exists and is not a zombie waiting to be reaped."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state not in ("Z", "X")


def healthy(port: int) -> bool:
    """Whether a farmhand server on `port` answers /health (its socket is bound only after
    uvicorn logs that startup is complete)."""
    try:
        return httpx.get(f"http://127.0.0.1:{port}/health", timeout=10).status_code == 200
    except httpx.HTTPError:
        return False


def wait_until(condition: object, timeout: float = 10.0) -> bool:
    """Poll `condition()` until it holds or the deadline passes (no fixed sleeps)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():  # type: ignore[operator]
            return True
        time.sleep(0.02)
    return False


@contextmanager
def listening(command: list[str], port: int, env: dict[str, str] | None = None) -> Iterator[str]:
    """Run a server that listens on 127.0.0.1:port until the block ends; yields its base URL."""
    # Its stderr goes to a file, not a pipe: a chatty server would fill a pipe and block.
    with tempfile.TemporaryFile() as log:
        process = subprocess.Popen(
            command,
            env={**os.environ, **(env or {})},
            stdout=subprocess.DEVNULL,
            stderr=log,
            start_new_session=True,
        )
        try:

            def accepts() -> bool:
                if process.poll() is not None:
                    log.seek(0)
                    raise RuntimeError(f"{command} exited: {log.read().decode()}")
                with socket.socket() as s:
                    return s.connect_ex(("127.0.0.1", port)) == 0

            if not wait_until(accepts, timeout=20):
                raise RuntimeError(f"{command} did not listen on port {port}")
            yield f"http://127.0.0.1:{port}"
        finally:
            os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(5)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()


def everything_over(transport: str) -> Iterator[str]:
    port = free_port()
    node_options = f"--require {LOCALHOST_ONLY}"
    with listening(
        [everything_bin(), transport], port, {"PORT": str(port), "NODE_OPTIONS": node_options}
    ) as url:
        yield url
