"""One MCP server as a Toolset: its tools listed (cached) and called under a timeout. The
approval a server's `require_approval` asks for is a wrapper around it (`approval.gated`).

Standalone (`async with MCPToolset.from_config(server)`), the toolset starts its server on
entry and stops it on exit. From an `MCPPool`, it borrows the pool's long-lived connection
and entering or leaving it changes nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AsyncExitStack
from typing import Any

import anyio
from mcp import types
from mcp.shared.exceptions import MCPError
from mcp_types import CONNECTION_CLOSED

from farmhand.config.models import McpServerConfig
from farmhand.errors import ToolServerError
from farmhand.tools.definition import SEPARATOR, ToolDefinition
from farmhand.toolsets.base import ToolOutput
from farmhand.toolsets.mcp.connection import ServerConnection, reason
from farmhand.toolsets.mcp.content import result_text
from farmhand.toolsets.mcp.elicitation import NO_ONE, Asker
from farmhand.toolsets.mcp.stdio import StderrLog
from farmhand.toolsets.mcp.transports import ServerTarget, Target, server_target

__all__ = ["MCPToolset", "Target"]


class _ServerGone(Exception):
    """The session broke under a call (the server crashed or the connection dropped)."""


class MCPToolset:
    """The tools of one MCP server, under the server's own tool names.

    Connect with `async with`; enter and leave in the same task (the SDK's cancel scopes
    require it). `asker` answers what the server asks during this toolset's calls; None
    leaves it to the connection's default.
    """

    def __init__(
        self,
        name: str,
        target: Callable[[], Target] | ServerTarget,
        *,
        describe: str = "",
        connect_timeout: float = 60.0,
        call_timeout: float = 30.0,
        stderr: StderrLog | None = None,
        connection: ServerConnection | None = None,
        asker: Asker | None = None,
        mode: str = "auto",
    ) -> None:
        self.name = name
        self.mode = mode
        """The protocol revision of an owned connection: "auto" (2026-07-28 where the server
        speaks it, else the handshake) or "legacy" (the handshake only)."""
        self.asker = asker
        self._target = (
            target
            if isinstance(target, ServerTarget)
            else ServerTarget(target, describe or name, stderr)
        )
        self._connect_timeout = connect_timeout
        self._call_timeout = call_timeout
        self._connection = connection
        self._owns_connection = connection is None
        self._stack: AsyncExitStack | None = None

    @classmethod
    def from_config(
        cls,
        server: McpServerConfig,
        *,
        call_timeout: float = 30.0,
        connect_timeout: float = 60.0,
        asker: Asker | None = None,
    ) -> MCPToolset:
        """A toolset for one server, connected on `async with`."""
        target = server_target(server)
        return cls(
            server.name,
            target,
            call_timeout=server.tool_timeout or call_timeout,
            connect_timeout=connect_timeout,
            asker=asker,
        )

    @classmethod
    def pooled(
        cls,
        server: McpServerConfig,
        connection: ServerConnection,
        *,
        call_timeout: float,
        asker: Asker | None = None,
    ) -> MCPToolset:
        return cls(
            server.name,
            connection.target,
            call_timeout=call_timeout,
            connection=connection,
            asker=asker,
        )

    @property
    def connection(self) -> ServerConnection:
        if self._connection is None:
            raise ToolServerError(f"MCP server {self.name!r} is not connected; use `async with`")
        return self._connection

    async def __aenter__(self) -> MCPToolset:
        if not self._owns_connection:
            return self
        connection = self._connection = ServerConnection(
            self.name,
            self._target,
            connect_timeout=self._connect_timeout,
            asker=self.asker or NO_ONE,
            mode=self.mode,
        )
        stack = AsyncExitStack()
        group = await stack.enter_async_context(anyio.create_task_group())
        stack.callback(connection.close)  # runs before the group waits for run() to end
        await group.start(connection.run)
        try:
            async with connection.session():
                pass  # fail here, at entry, when the server cannot start
        except BaseException:
            await stack.aclose()
            self._close_stderr()
            raise
        self._stack = stack
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        stack, self._stack = self._stack, None
        if stack is not None:
            # Not under a shield scope: the task group inside must close in the scope that
            # opened it. The SDK shields its own process shutdown.
            await stack.aclose()
            self._close_stderr()

    def _close_stderr(self) -> None:
        if self._owns_connection and self._target.stderr is not None:
            self._target.stderr.close()

    async def list_tools(self) -> list[ToolDefinition]:
        connection = self.connection
        try:
            tools = await connection.tools(self._call_timeout)
        except ToolServerError:
            raise
        except Exception as exc:
            raise ToolServerError(
                connection.failure(f"could not list tools ({reason(exc)})")
            ) from exc
        return [_definition(t) for t in tools]

    async def call_tool(
        self, name: str, arguments: dict[str, Any], *, timeout: float | None = None
    ) -> ToolOutput:
        """Call a tool; failures the model can act on come back as error results."""
        limit = timeout or self._call_timeout
        try:
            return await self._call_once(name, arguments, limit)
        except _ServerGone as gone:
            if not self._may_retry(name):
                return ToolOutput(
                    f"{self.name}{SEPARATOR}{name} failed: the MCP server stopped during the call"
                    f" ({gone}); it is restarted on the next call. The call may or may not"
                    " have taken effect.",
                    is_error=True,
                )
        try:  # read-only or idempotent: running it again is safe
            return await self._call_once(name, arguments, limit)
        except _ServerGone as gone:
            return ToolOutput(
                f"{self.name}:{name} failed twice: the MCP server stopped during the call"
                f" and again after a restart ({gone})",
                is_error=True,
            )

    async def _call_once(self, name: str, arguments: dict[str, Any], limit: float) -> ToolOutput:
        connection = self.connection
        async with connection.session() as client:
            try:
                with (
                    anyio.fail_after(limit) as scope,
                    connection.callers.calling(name, self.asker, scope),
                ):
                    async with connection.call_slots:
                        result = await client.call_tool(name, arguments)
            except TimeoutError:
                connection.call_timed_out(client)
                return ToolOutput(
                    f"{self.name}:{name} did not answer within {limit:g} s and was cancelled;"
                    " try a smaller request, or another tool",
                    is_error=True,
                )
            except MCPError as exc:
                if exc.error.code == CONNECTION_CLOSED or not connection.connected:
                    connection.mark_broken(client)
                    raise _ServerGone(exc.error.message) from exc
                # A refusal the transport can explain (a login needed) says what to do.
                advice = connection.target.advice() if connection.target.advice else None
                why = advice or exc.error.message
                return ToolOutput(f"{self.name}:{name} failed: {why}", is_error=True)
            except Exception as exc:
                connection.mark_broken(client)
                raise _ServerGone(reason(exc)) from exc
        connection.call_succeeded()
        return ToolOutput(result_text(result), is_error=bool(result.is_error))

    def _may_retry(self, name: str) -> bool:
        tool = self.connection.cached_tool(name)
        hints = tool.annotations if tool else None
        return bool(hints and (hints.read_only_hint or hints.idempotent_hint))


def _definition(tool: types.Tool) -> ToolDefinition:
    return ToolDefinition(
        tool.name,
        tool.description or "",
        dict(tool.input_schema),
        annotations=tool.annotations.model_dump(by_alias=True, exclude_none=True)
        if tool.annotations
        else {},
    )
