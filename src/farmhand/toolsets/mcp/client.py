"""One MCP server as a Toolset, through the official SDK's Client."""

from __future__ import annotations

import os
import shlex
from collections.abc import Callable
from contextlib import AsyncExitStack
from typing import Any

import anyio
from mcp import Client, types
from mcp.client import Transport
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.server.mcpserver import MCPServer
from mcp.shared.exceptions import MCPError

from farmhand.config.models import McpServerConfig
from farmhand.errors import ToolServerError
from farmhand.tools.definition import ToolDefinition
from farmhand.toolsets.base import ToolOutput
from farmhand.toolsets.mcp.content import result_text
from farmhand.toolsets.mcp.stdio import StderrLog, resolve_command

# What Client() connects to: a transport, a URL, or (in tests) an in-process server.
Target = Transport | MCPServer | str


class MCPToolset:
    """The tools of one MCP server, under the server's own tool names.

    Connect with `async with`; enter and leave in the same task (the SDK's cancel scopes
    require it).
    """

    def __init__(
        self,
        name: str,
        target: Callable[[], Target],
        *,
        describe: str = "",
        connect_timeout: float = 60.0,
        call_timeout: float = 30.0,
        stderr: StderrLog | None = None,
    ) -> None:
        self.name = name
        self._target = target
        self._describe = describe or name
        self._connect_timeout = connect_timeout
        self._call_timeout = call_timeout
        self._stderr = stderr
        self._stack: AsyncExitStack | None = None
        self._client: Client | None = None
        self._tools: list[types.Tool] | None = None
        self._scope = anyio.CancelScope()
        self._ready = anyio.Event()
        self._closing = anyio.Event()
        self._error: BaseException | None = None

    @classmethod
    def from_config(cls, server: McpServerConfig, *, call_timeout: float = 30.0) -> MCPToolset:
        if server.transport != "stdio":
            raise ToolServerError(
                f"MCP server {server.name!r}: transport {server.transport!r} is not supported yet;"
                " use transport: stdio"
            )
        assert server.command is not None  # the config validator requires it for stdio
        params = StdioServerParameters(
            command=resolve_command(server.command),
            args=list(server.args),
            env=dict(server.env) or None,
            cwd=os.getcwd(),
        )
        stderr = StderrLog()
        return cls(
            server.name,
            lambda: stdio_client(params, errlog=stderr.file),
            describe=shlex.join([server.command, *server.args]),
            call_timeout=server.tool_timeout or call_timeout,
            stderr=stderr,
        )

    async def __aenter__(self) -> MCPToolset:
        # The SDK's Client opens task groups, so it lives in one task of ours from entry to
        # exit (entering it under a timeout scope that closes first breaks anyio's nesting).
        stack = AsyncExitStack()
        group = await stack.enter_async_context(anyio.create_task_group())
        stack.push_async_callback(self._stop)
        group.start_soon(self._serve)
        with anyio.move_on_after(self._connect_timeout) as waited:
            await self._ready.wait()
        if waited.cancelled_caught or self._client is None:
            await stack.aclose()
            why = (
                f"did not answer within {self._connect_timeout:g} s"
                if waited.cancelled_caught
                else f"failed to start ({_reason(self._error)})"
            )
            raise ToolServerError(self._failure(why))
        self._stack = stack
        return self

    async def _serve(self) -> None:
        with self._scope:
            try:
                async with Client(self._target()) as client:
                    self._client = client
                    self._ready.set()
                    await self._closing.wait()
            except Exception as exc:
                self._error = exc
            finally:
                self._client = None
                self._ready.set()

    async def _stop(self) -> None:
        self._closing.set()

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        stack, self._stack = self._stack, None
        if stack is not None:
            # Not under a shield scope: the task group inside must close in the scope that
            # opened it. The SDK shields its own process shutdown.
            await stack.aclose()
        if self._stderr is not None:
            self._stderr.close()

    async def list_tools(self) -> list[ToolDefinition]:
        if self._tools is None:
            client = self._connected()
            try:
                with anyio.fail_after(self._call_timeout):
                    self._tools = list((await client.list_tools()).tools)
            except Exception as exc:
                raise ToolServerError(
                    self._failure(f"could not list tools ({_reason(exc)})")
                ) from exc
        return [
            ToolDefinition(
                t.name,
                t.description or "",
                dict(t.input_schema),
                annotations=t.annotations.model_dump(by_alias=True, exclude_none=True)
                if t.annotations
                else {},
            )
            for t in self._tools
        ]

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> ToolOutput:
        client = self._connected()
        try:
            with anyio.fail_after(self._call_timeout):
                result = await client.call_tool(name, arguments)
        except TimeoutError:
            return ToolOutput(
                f"{self.name}:{name} did not answer within {self._call_timeout:g} s", is_error=True
            )
        except MCPError as exc:
            return ToolOutput(f"{self.name}:{name} failed: {exc.error.message}", is_error=True)
        except Exception as exc:
            raise ToolServerError(self._failure(f"broke during {name} ({_reason(exc)})")) from exc
        return ToolOutput(result_text(result), is_error=bool(result.is_error))

    def _connected(self) -> Client:
        if self._client is None:
            why = f" (it stopped: {_reason(self._error)})" if self._error else ""
            raise ToolServerError(self._failure(f"is not connected{why}"))
        return self._client

    def _failure(self, what: str) -> str:
        message = f"MCP server {self.name!r} ({self._describe}) {what}"
        tail = self._stderr.tail() if self._stderr else ""
        return f"{message}; its stderr ended with:\n{tail}" if tail else message


def _reason(exc: BaseException | None) -> str:
    """The innermost useful message of an exception (task groups wrap them in groups)."""
    if exc is None:
        return "unknown reason"
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
