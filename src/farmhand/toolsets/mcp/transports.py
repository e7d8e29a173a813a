"""How farmhand reaches one MCP server: stdio, streamable HTTP or SSE, all through the SDK.

Each transport is opened afresh for every (re)connection and reports when its read side
ends, which is how a crashed server is noticed before the next call is sent to it.
"""

from __future__ import annotations

import os
import shlex
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, Protocol, Self
from urllib.parse import urlsplit, urlunsplit

import anyio
import httpx2
from mcp.client import Transport
from mcp.client.stdio import StdioServerParameters
from mcp.server.mcpserver import MCPServer
from mcp.shared.message import SessionMessage

from farmhand.config.models import McpServerConfig
from farmhand.toolsets.mcp.challenge import Challenge
from farmhand.toolsets.mcp.http import streamable_http
from farmhand.toolsets.mcp.oauth_client import FarmhandOAuth, oauth_for
from farmhand.toolsets.mcp.security import server_environment, validate_command
from farmhand.toolsets.mcp.sse import sse
from farmhand.toolsets.mcp.stdio import StderrLog, process_group_stdio, resolve_command

# What Client() connects to: a transport, a URL, or (in tests) an in-process server.
Target = Transport | MCPServer | str


@dataclass
class ServerTarget:
    """Everything needed to (re)connect to one server, and to explain a failure."""

    open: Callable[[], Target]
    describe: str
    stderr: StderrLog | None = None
    advice: Callable[[], str | None] | None = None
    """What the user can do about the last failure, when the transport could tell."""


def server_target(server: McpServerConfig, *, auth: httpx2.Auth | None = None) -> ServerTarget:
    """The target for a server; unsafe commands raise ConfigError. `auth` replaces the
    OAuth of `auth: oauth` (a login brings its own)."""
    if server.transport == "stdio":
        return _stdio_target(server)
    assert server.base_url is not None  # the config validator requires it for http and sse
    url, headers = server.base_url, dict(server.headers)
    challenge = Challenge(server.name) if server.auth is None and auth is None else None
    open_url = sse if server.transport == "sse" else streamable_http

    current: list[FarmhandOAuth] = []

    def opened() -> Target:
        # A fresh provider per connection: it reads the token file, which a login or
        # another process may have changed. No stored login fails here, before any request.
        oauth = auth or (oauth_for(server) if server.auth == "oauth" else None)
        current[:] = [oauth] if isinstance(oauth, FarmhandOAuth) else []
        return open_url(url, headers, oauth, challenge)

    def advice() -> str | None:
        if challenge is not None:
            return challenge.advice()
        return current[0].refusal() if current else None

    kind = "SSE" if server.transport == "sse" else "HTTP"
    return ServerTarget(opened, f"{kind} {shown_url(url)}", advice=advice)


def where(server: McpServerConfig) -> str:
    """Where a server is, for people: its transport and URL, or its command."""
    if server.base_url is not None and server.transport != "stdio":
        return f"{server.transport} {shown_url(server.base_url)}"
    return f"stdio {server.command}"


def shown_url(url: str) -> str:
    """The URL for messages: without credentials or a query string, which may carry tokens."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def _stdio_target(server: McpServerConfig) -> ServerTarget:
    assert server.command is not None  # the config validator requires it for stdio
    validate_command(server)
    command, args = reaped(resolve_command(server.command), list(server.args))
    params = StdioServerParameters(
        command=command,
        args=args,
        env=server_environment(server.env),
        cwd=os.getcwd(),
    )
    stderr = StderrLog()
    return ServerTarget(
        lambda: process_group_stdio(params, stderr),
        shlex.join([server.command, *server.args]),
        stderr,
    )


REAPER = Path(__file__).with_name("reaper.py")


def reaped(command: str, args: list[str]) -> tuple[str, list[str]]:
    """On Linux, the server runs under `reaper.py`, so what it starts dies with farmhand
    (even on SIGKILL) and with its session; elsewhere it runs as it is."""
    if sys.platform != "linux":
        return command, args
    return sys.executable, ["-I", "-S", str(REAPER), "--", command, *args]


class ReceiveStream(Protocol):
    """What the SDK's read streams offer (their own protocol lives in a private module)."""

    async def receive(self) -> SessionMessage | Exception: ...
    async def aclose(self) -> None: ...
    async def __anext__(self) -> SessionMessage | Exception: ...


_ENDED = (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError)


class WatchedReadStream:
    """A transport's read stream that calls `on_end` once it ends (the server went away)."""

    def __init__(self, inner: ReceiveStream, on_end: Callable[[], None]):
        self._inner = inner
        self._on_end = on_end

    async def receive(self) -> SessionMessage | Exception:
        try:
            return await self._inner.receive()
        except _ENDED:
            self._on_end()
            raise

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        try:
            return await self._inner.__anext__()
        except (StopAsyncIteration, *_ENDED):
            self._on_end()
            raise

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc_val: BaseException | None,
        exc_tb: TracebackType | None,
    ) -> None:
        self._on_end()
        await self._inner.aclose()

    def __getattr__(self, name: str) -> Any:
        # The dispatcher reads optional attributes such as `last_context`.
        return getattr(self._inner, name)


@asynccontextmanager
async def watched(transport: Transport, on_end: Callable[[], None]) -> AsyncIterator[Any]:
    async with transport as (read_stream, write_stream):
        yield WatchedReadStream(read_stream, on_end), write_stream
