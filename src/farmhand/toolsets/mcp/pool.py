"""Persistent MCP sessions, shared across requests: one long-lived task per server.

The HTTP API serves many requests with the same servers; starting a server per request
costs seconds, so the pool keeps each one connected (keyed by its whole config, so a
changed config is a different server), closes sessions that sat idle for an hour, and
reconnects on the next use. Shutdown closes every session and reaps every child process.

Servers that came from requests rather than the operator's config are bounded: at most
`max_request_servers` of them run at once (the least recently used idle one is stopped to
make room) and they close after `request_idle_timeout`. Every server takes at most
`max_concurrent_calls` calls at a time, so one client cannot tie up all of its workers.

    async with MCPPool() as pool:
        toolset = pool.toolset(server_config)
        await toolset.call_tool("echo", {"text": "hi"})
"""

from __future__ import annotations

from contextlib import AsyncExitStack

import anyio
from anyio.abc import TaskGroup

from farmhand.config.models import McpServerConfig
from farmhand.errors import ToolServerError
from farmhand.observability import NO_OBSERVER, Observer
from farmhand.toolsets.mcp.client import MCPToolset
from farmhand.toolsets.mcp.connection import ServerConnection
from farmhand.toolsets.mcp.elicitation import NO_ONE, Asker
from farmhand.toolsets.mcp.transports import server_target

IDLE_TIMEOUT = 3600.0
"""Seconds an unused session stays open."""
REQUEST_IDLE_TIMEOUT = 300.0
"""Seconds an unused session of a server from a request stays open."""
MAX_REQUEST_SERVERS = 16
MAX_CONCURRENT_CALLS = 8


class MCPPool:
    """Long-lived connections to MCP servers; use as `async with`, in one task."""

    def __init__(
        self,
        *,
        call_timeout: float = 30.0,
        connect_timeout: float = 60.0,
        idle_timeout: float = IDLE_TIMEOUT,
        request_idle_timeout: float = REQUEST_IDLE_TIMEOUT,
        max_request_servers: int = MAX_REQUEST_SERVERS,
        max_concurrent_calls: int = MAX_CONCURRENT_CALLS,
        asker: Asker = NO_ONE,
        observer: Observer = NO_OBSERVER,
    ) -> None:
        self.asker = asker
        self.observer = observer
        """Told of every restart and call timeout of the pool's servers (metrics)."""
        """Answers a server's questions asked outside any call of a toolset with an asker
        of its own (e.g. while listing tools); by default no one can."""
        self.call_timeout = call_timeout
        self.connect_timeout = connect_timeout
        self.idle_timeout = idle_timeout
        self.request_idle_timeout = request_idle_timeout
        self.max_request_servers = max_request_servers
        self.max_concurrent_calls = max_concurrent_calls
        self._connections: dict[str, ServerConnection] = {}
        self._from_requests: dict[str, ServerConnection] = {}  # least recently used first
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
            _release(connection)
        self._connections.clear()
        self._from_requests.clear()

    def _close_all(self) -> None:
        for connection in self._connections.values():
            connection.close()

    def toolset(
        self,
        server: McpServerConfig,
        *,
        call_timeout: float | None = None,
        from_request: bool = False,
        asker: Asker | None = None,
    ) -> MCPToolset:
        """A toolset over the pooled connection to `server`; connects on first use.
        `from_request`: the server came from a request (already admitted by the request
        policy), so it counts against `max_request_servers`. `asker`: who answers the
        server's questions during this toolset's calls (one conversation's user)."""
        connection = self.connection(server, from_request=from_request)
        timeout = server.tool_timeout or call_timeout or self.call_timeout
        return MCPToolset.pooled(server, connection, call_timeout=timeout, asker=asker)

    def connection(
        self, server: McpServerConfig, *, from_request: bool = False
    ) -> ServerConnection:
        if self._group is None:
            raise ToolServerError("the MCP pool is not open; use it as `async with MCPPool()`")
        key = server.model_dump_json()
        connection = self._connections.get(key)
        if connection is not None and not connection.closed:
            if key in self._from_requests:  # used again: now the most recent
                self._from_requests[key] = self._from_requests.pop(key)
            return connection
        if from_request:
            self._make_room()
        connection = ServerConnection(
            server.name,
            server_target(server),
            connect_timeout=self.connect_timeout,
            idle_timeout=self.request_idle_timeout if from_request else self.idle_timeout,
            max_concurrent_calls=self.max_concurrent_calls,
            asker=self.asker,
            observer=self.observer,
            operators=not from_request,
        )
        self._connections[key] = connection
        if from_request:
            self._from_requests[key] = connection
        self._group.start_soon(self._run, key, connection)
        return connection

    def _make_room(self) -> None:
        """Stop the least recently used idle request server while there are too many."""
        while len(self._from_requests) >= self.max_request_servers:
            idle = next((k for k, c in self._from_requests.items() if not c.busy), None)
            if idle is None:
                raise ToolServerError(
                    f"{len(self._from_requests)} MCP servers from requests are busy, the most"
                    " this server runs at once (server.request_servers.max_alive); try again"
                    " when one is done"
                )
            self._from_requests.pop(idle).close()

    async def _run(self, key: str, connection: ServerConnection) -> None:
        try:
            await connection.run()
        finally:
            if connection.closed and self._group is not None:  # evicted; the pool stays open
                if self._connections.get(key) is connection:
                    del self._connections[key]
                _release(connection)

    def find(self, server: McpServerConfig) -> ServerConnection | None:
        """The pool's connection to `server` (this very config), if it made one."""
        return self._connections.get(server.model_dump_json())

    @property
    def connections(self) -> list[ServerConnection]:
        return list(self._connections.values())


def _release(connection: ServerConnection) -> None:
    if connection.target.stderr is not None:
        connection.target.stderr.close()
