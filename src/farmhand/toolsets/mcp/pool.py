"""Persistent MCP sessions, shared across requests: one long-lived task per server.

The HTTP API serves many requests with the same servers; starting a server per request
costs seconds, so the pool keeps each one connected (keyed by its whole config, so a
changed config is a different server), closes sessions that sat idle for an hour, and
reconnects on the next use. Shutdown closes every session and reaps every child process.

    async with MCPPool() as pool:
        toolset = pool.toolset(server_config)
        await toolset.call_tool("echo", {"text": "hi"})
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AsyncExitStack
from pathlib import Path

import anyio
from anyio.abc import TaskGroup

from farmhand.config.models import McpServerConfig
from farmhand.errors import ToolServerError
from farmhand.toolsets.mcp.client import MCPToolset
from farmhand.toolsets.mcp.connection import ServerConnection
from farmhand.toolsets.mcp.security import validate_command
from farmhand.toolsets.mcp.transports import server_target

IDLE_TIMEOUT = 3600.0
"""Seconds an unused session stays open."""


class MCPPool:
    """Long-lived connections to MCP servers; use as `async with`, in one task."""

    def __init__(
        self,
        *,
        call_timeout: float = 30.0,
        connect_timeout: float = 60.0,
        idle_timeout: float = IDLE_TIMEOUT,
    ) -> None:
        self.call_timeout = call_timeout
        self.connect_timeout = connect_timeout
        self.idle_timeout = idle_timeout
        self._connections: dict[str, ServerConnection] = {}
        self._group: TaskGroup | None = None
        self._stack = AsyncExitStack()

    async def __aenter__(self) -> MCPPool:
        self._group = await self._stack.enter_async_context(anyio.create_task_group())
        self._stack.callback(self._close_all)  # before the group waits for every run() to end
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        self._group = None
        await self._stack.aclose()
        for connection in self._connections.values():
            if connection.target.stderr is not None:
                connection.target.stderr.close()
        self._connections.clear()

    def _close_all(self) -> None:
        for connection in self._connections.values():
            connection.close()

    def toolset(
        self,
        server: McpServerConfig,
        *,
        call_timeout: float | None = None,
        from_request: bool = False,
        allowed_dirs: Sequence[Path] | None = None,
    ) -> MCPToolset:
        """A toolset over the pooled connection to `server`; connects on first use."""
        connection = self.connection(server, from_request=from_request, allowed_dirs=allowed_dirs)
        timeout = server.tool_timeout or call_timeout or self.call_timeout
        return MCPToolset.pooled(server.name, connection, call_timeout=timeout)

    def connection(
        self,
        server: McpServerConfig,
        *,
        from_request: bool = False,
        allowed_dirs: Sequence[Path] | None = None,
    ) -> ServerConnection:
        if self._group is None:
            raise ToolServerError("the MCP pool is not open; use it as `async with MCPPool()`")
        key = server.model_dump_json()
        connection = self._connections.get(key)
        if connection is not None:
            # Same server, maybe a stricter caller: its checks still apply.
            validate_command(server, from_request=from_request, allowed_dirs=allowed_dirs)
            return connection
        target = server_target(server, from_request=from_request, allowed_dirs=allowed_dirs)
        connection = ServerConnection(
            server.name,
            target,
            connect_timeout=self.connect_timeout,
            idle_timeout=self.idle_timeout,
        )
        self._connections[key] = connection
        self._group.start_soon(connection.run)
        return connection

    @property
    def connections(self) -> list[ServerConnection]:
        return list(self._connections.values())
