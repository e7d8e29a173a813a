"""One MCP server's session, kept alive in one long-lived task and restarted when it breaks.

The SDK's Client opens task groups and cancel scopes, so it must be entered and left in the
same task: `run()` is that task. Callers in any task ask `session()` for the live Client;
when there is none (not started yet, crashed, closed for idleness) `run()` connects again,
after a backoff that grows with consecutive failures.

Every session introduces itself as farmhand and declares elicitation: what the server asks
mid-call goes to the asker of the call in flight (`callers.ServerCallers`).
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
from anyio.abc import TaskStatus
from mcp import Client, types
from mcp.client import IncomingMessage
from mcp.server.mcpserver import MCPServer
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from farmhand.errors import ToolServerError
from farmhand.observability import NO_OBSERVER, Observer
from farmhand.toolsets.mcp.callers import ServerCallers
from farmhand.toolsets.mcp.elicitation import NO_ONE, Asker, client_info
from farmhand.toolsets.mcp.tool_lists import ToolList, fetch_tools
from farmhand.toolsets.mcp.transports import ServerTarget, watched

log = logging.getLogger(__name__)

MAX_BACKOFF = 30.0
TIMEOUTS_BEFORE_RESTART = 3
"""Consecutive calls that time out before the session is restarted (its process group
killed): a server whose workers are all stuck never answers again by itself."""


class _Attempt:
    """One request to connect; done once it succeeded or failed."""

    def __init__(self) -> None:
        self.done = anyio.Event()
        self.abandoned = False
        self.timed_out = False
        self.scope: anyio.CancelScope | None = None


class ServerConnection:
    """The live session with one server, shared by every toolset over that server."""

    def __init__(
        self,
        name: str,
        target: ServerTarget,
        *,
        connect_timeout: float = 60.0,
        idle_timeout: float | None = None,
        mode: str = "auto",
        max_concurrent_calls: int | None = None,
        timeouts_before_restart: int = TIMEOUTS_BEFORE_RESTART,
        asker: Asker = NO_ONE,
        observer: Observer = NO_OBSERVER,
        operators: bool = True,
    ) -> None:
        self.name = name
        self.observer = observer
        self.operators = operators
        """One of the operator's servers (else a request's or a project's: its restarts and
        timeouts are never counted under an operator's server of the same name)."""
        self.mode = mode
        """How to pick the protocol revision: "auto" probes, "legacy" forces the handshake."""
        self.target = target
        self.connect_timeout = connect_timeout
        self.idle_timeout = idle_timeout
        self.failures = 0
        """Consecutive crashes or failed starts; reset by a successful call."""
        self.restarts = 0
        self.timeouts = 0
        """Consecutive calls that timed out; reset by a call that answered."""
        self.timeouts_before_restart = timeouts_before_restart
        self.call_slots = anyio.Semaphore(max_concurrent_calls or 1_000_000)
        """Calls in flight at once; a caller waits for a slot within its own timeout."""
        self.protocol_version: str | None = None
        """The revision the last session negotiated, e.g. 2025-11-25 or 2026-07-28."""
        self.callers = ServerCallers(name, asker)
        """The calls in flight, and who answers the server's questions (elicitation)."""
        self._client: Client | None = None
        self._down = anyio.Event()  # the current session must end (crash, broken, idle, close)
        self._wanted = anyio.Event()  # someone wants a session
        self._attempt = _Attempt()
        self._lock = anyio.Lock()
        self._closed = False
        self._error: BaseException | None = None
        self._busy = 0
        self._last_used = time.monotonic()
        self._tools: ToolList | None = None
        self._tools_stale = False  # the server said they changed since the last fetch
        self._tools_changed = anyio.Event()
        self._ever_connected = False

    # --- the long-lived task -------------------------------------------------------------

    async def run(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Serve sessions until close(); run it in a task group that outlives every caller."""
        task_status.started()
        while True:
            await self._wanted.wait()
            self._wanted = anyio.Event()
            if self._closed:
                return
            attempt = self._attempt
            if not attempt.abandoned:
                await self._serve_one(attempt)
            if self._closed:
                return

    async def _serve_one(self, attempt: _Attempt) -> None:
        connected = False
        backoff = self._backoff()
        # The deadline covers the start only (lifted once connected). The scope encloses the
        # whole Client, so cancelling it never leaves one of the SDK's scopes half closed.
        with anyio.CancelScope(
            deadline=anyio.current_time() + backoff + self.connect_timeout
        ) as scope:
            attempt.scope = scope
            try:
                await anyio.sleep(backoff)
                down = self._down = anyio.Event()
                transport: Any = self.target.open()
                if not isinstance(transport, str | MCPServer):
                    transport = watched(transport, down.set)
                async with Client(
                    transport,
                    mode=self.mode,
                    message_handler=self._on_message,
                    client_info=client_info(),
                    elicitation_callback=self.callers.elicit,
                ) as client:
                    if self._ever_connected:
                        self.restarts += 1
                        if self.failures:  # not one closed for sitting idle
                            self.observer.mcp_restart(self.name, operators=self.operators)
                    self._ever_connected = True
                    self.protocol_version = client.protocol_version
                    self._last_used = time.monotonic()
                    self._client = client
                    connected = True
                    scope.deadline = math.inf
                    log.debug(
                        "MCP server %s %s (protocol %s)",
                        self.name,
                        "restarted" if self.restarts else "started",
                        client.protocol_version,
                    )
                    attempt.done.set()
                    async with anyio.create_task_group() as group:
                        group.start_soon(self._refresh_tools_on_change, client)
                        group.start_soon(self._listen_for_tool_changes, client)
                        await self._hold(down)
                        group.cancel_scope.cancel()
            except Exception as exc:
                self._error = exc
                log.debug("MCP server %s stopped: %s", self.name, reason(exc))
                if not connected:  # a session that broke was counted by _hold already
                    self.failures += 1
            finally:
                self._client = None
                attempt.done.set()
        if scope.cancelled_caught and not self._closed:
            attempt.timed_out = True
            self.failures += 1

    async def _hold(self, down: anyio.Event) -> None:
        """Wait until the session must end: it broke, was closed, or sat idle too long."""
        while not down.is_set():
            if self.idle_timeout is None:
                await down.wait()
                break
            left = self._last_used + self.idle_timeout - time.monotonic()
            if left <= 0 and self._busy == 0:
                log.info("closing MCP server %s: idle for %g s", self.name, self.idle_timeout)
                return
            with anyio.move_on_after(max(left, 1.0)):  # a call still running: look again soon
                await down.wait()
        if not self._closed:
            self.failures += 1  # it crashed or broke under a call

    def _backoff(self) -> float:
        if self.failures <= 1:
            return 0.0
        return min(0.25 * 2.0 ** (self.failures - 2), MAX_BACKOFF)

    async def _on_message(self, message: IncomingMessage) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            # Not fetched here: this runs in the session's read loop, which the answer needs.
            self._tools_stale = True
            self._tools_changed.set()

    async def _listen_for_tool_changes(self, client: Client) -> None:
        """On the stateless revision (2026-07-28) change events come from a subscription,
        not as notifications; older servers send them unasked (see _on_message)."""
        tools = client.server_capabilities.tools
        if client.protocol_version not in MODERN_PROTOCOL_VERSIONS or not (
            tools and tools.list_changed
        ):
            return
        try:
            async with client.listen(tools_list_changed=True) as changes:
                async for _ in changes:
                    self._tools_stale = True
                    self._tools_changed.set()
        except Exception as exc:  # the TTL still bounds how stale the list gets
            log.info("MCP server %s: no tool change events (%s)", self.name, reason(exc))

    async def _refresh_tools_on_change(self, client: Client) -> None:
        while True:
            await self._tools_changed.wait()
            self._tools_changed = anyio.Event()
            try:
                with anyio.fail_after(self.connect_timeout):
                    await self._fetch_tools(client)
            except Exception as exc:
                log.warning("MCP server %s: refreshing its tools failed: %s", self.name, exc)

    # --- for callers, in any task ----------------------------------------------------------

    @property
    def connected(self) -> bool:
        return self._client is not None and not self._down.is_set()

    @property
    def busy(self) -> bool:
        return self._busy > 0

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def status(self) -> str:
        """What a person watching sees: "running" (a live session), "restarting" (the last
        one broke or failed to start, and the next use starts it again), "idle" (none yet,
        or closed after sitting unused) or "closed"."""
        if self._closed:
            return "closed"
        if self.connected:
            return "running"
        return "restarting" if self.failures else "idle"

    @property
    def last_error(self) -> str | None:
        """Why the last session ended or failed to start, if it did."""
        return reason(self._error) if self._error is not None else None

    @asynccontextmanager
    async def session(self) -> AsyncIterator[Client]:
        """The live Client, connecting first if needed; counts as use (for the idle timer)."""
        self._busy += 1  # before connecting: a fresh session must not look idle
        try:
            client = self._client
            if client is None or self._down.is_set():
                client = await self._connect()
            yield client
        finally:
            self._busy -= 1
            self._last_used = time.monotonic()

    async def _connect(self) -> Client:
        async with self._lock:
            if self._client is not None and not self._down.is_set():
                return self._client
            if self._closed:
                raise ToolServerError(self.failure("was shut down"))
            attempt = self._attempt = _Attempt()
            self._wanted.set()
            wait = self.connect_timeout + self._backoff() + 10.0  # + a dying session's shutdown
            with anyio.move_on_after(wait) as waited:
                await attempt.done.wait()
            if waited.cancelled_caught or attempt.timed_out:
                attempt.abandoned = True
                if attempt.scope is not None:
                    attempt.scope.cancel()
                raise ToolServerError(
                    self.failure(f"did not answer within {self.connect_timeout:g} s")
                )
            if self._closed:
                raise ToolServerError(self.failure("was shut down"))
            if self._client is None:
                verb = "failed to restart" if self._ever_connected else "failed to start"
                raise ToolServerError(self.failure(f"{verb} ({reason(self._error)})"))
            return self._client

    def mark_broken(self, client: Client) -> None:
        """`client`'s session failed under a call: end it, so the next call starts a new one
        (unless another call already did, and a fresh session is up)."""
        if client is self._client:
            self._down.set()

    def call_succeeded(self) -> None:
        self.failures = 0
        self.timeouts = 0

    def call_timed_out(self, client: Client) -> None:
        """Count a call that did not answer in time; after `timeouts_before_restart` in a
        row the session is ended, so the next call starts the server afresh."""
        self.timeouts += 1
        self.observer.mcp_timeout(self.name, operators=self.operators)
        if self.timeouts >= self.timeouts_before_restart:
            log.warning(
                "MCP server %s: %d calls in a row timed out; restarting it",
                self.name,
                self.timeouts,
            )
            self.timeouts = 0
            self.mark_broken(client)

    async def tools(self, timeout: float) -> list[types.Tool]:
        """The server's tools, cached as long as the server allows (`tool_lists.py`) and
        refreshed when it says they changed."""
        listed = self._tools
        if listed is None or self._tools_stale or not listed.fresh():
            async with self.session() as client:
                with anyio.fail_after(timeout):
                    listed = await self._fetch_tools(client)
            names = [t.name for t in listed.tools]
            log.debug(
                "MCP server %s: %d tools loaded (fresh for %g s): %s",
                self.name,
                len(names),
                listed.ttl,
                names,
            )
        return listed.tools

    async def _fetch_tools(self, client: Client) -> ToolList:
        self._tools_stale = False  # before: a change announced during the fetch still counts
        tools = self._tools = await fetch_tools(client)
        return tools

    @property
    def tool_list(self) -> ToolList | None:
        """The last list fetched, with its freshness (None before the first)."""
        return self._tools

    def cached_tool(self, name: str) -> types.Tool | None:
        return next((t for t in (self._tools.tools if self._tools else ()) if t.name == name), None)

    def close(self) -> None:
        """Ask run() to end the session and return; its task group then finishes."""
        self._closed = True
        self._down.set()
        self._wanted.set()
        if self._client is None and self._attempt.scope is not None:
            self._attempt.scope.cancel()  # still connecting: do not wait for it

    def failure(self, what: str) -> str:
        """A message naming the server, its command and the end of its stderr."""
        message = f"MCP server {self.name!r} ({self.target.describe}) {what}"
        advice = self.target.advice() if self.target.advice else None
        if advice:
            message += f"; {advice}"
        tail = self.target.stderr.tail() if self.target.stderr else ""
        return f"{message}; its stderr ended with:\n{tail}" if tail else message


def reason(exc: BaseException | None) -> str:
    """The innermost useful message of an exception (task groups wrap them in groups)."""
    if exc is None:
        return "unknown reason"
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
