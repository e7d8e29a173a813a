"""Stopping without cutting answers: the drain `farmhand serve` runs on SIGTERM.

`Drain` is the state: once `begin()` is called, `DrainGate` answers every new request with
a 503 (Retry-After, in the dialect's error shape) while the requests in flight go on; `/ready`
says `draining`, so a load balancer stops sending traffic here. The server (the CLI's
uvicorn loop) asks `finished()` every tick and stops once nothing is in flight or the
deadline (`server.drain_timeout`) passed; at the deadline it calls `cut()`, which ends each
request still running as clearly as its state allows: a stream that started gets the
dialect's error object as its last item (`streaming.EventStream` registers how, under
`STREAM_CUT` in the request's scope), a request not answered yet gets the 503.

Probes (`/health`, `/ready`) are never refused nor counted, and a GET on /mcp (an MCP
client's listening stream, open for as long as the client lives) is not counted either: it
carries no answer, and would otherwise hold every drain to its deadline.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from farmhand.errors import ShuttingDownError
from farmhand.server.dialect_registry import error_body_for_path
from farmhand.server.errors import error_response
from farmhand.server.streaming import CUT_SHORT, STREAM_CUT

log = logging.getLogger("farmhand.server.drain")

PROBE_PATHS = frozenset({"/health", "/ready"})
REFUSAL = (
    "the server is shutting down and takes no new requests; retry, and a load balancer will"
    " send it to another replica"
)


class Drain:
    """Whether the server is draining, and the requests still in flight."""

    def __init__(self, timeout: float) -> None:
        self.timeout = timeout
        self.deadline: float | None = None
        self.cuts: set[Callable[[], None]] = set()
        self.was_cut = False

    @property
    def draining(self) -> bool:
        return self.deadline is not None

    @property
    def in_flight(self) -> int:
        return len(self.cuts)

    def begin(self) -> None:
        if self.deadline is None:
            self.deadline = time.monotonic() + self.timeout
            log.info(
                "draining: %d request(s) in flight get up to %.0f s; new ones get a 503",
                self.in_flight,
                self.timeout,
            )

    def finished(self) -> bool:
        """Draining and nothing left to wait for: no request in flight, or the deadline
        passed (then the ones still running are cut)."""
        if self.deadline is None:
            return False
        if not self.cuts:
            return True
        if time.monotonic() < self.deadline:
            return False
        if not self.was_cut:
            self.was_cut = True
            log.warning("drain_timeout passed: cutting %d request(s) in flight", self.in_flight)
            for cut in list(self.cuts):
                cut()
        return True


class DrainGate:
    """Refuses new requests while the server drains, and keeps count of the ones in flight."""

    def __init__(self, app: ASGIApp, *, drain: Drain) -> None:
        self.app = app
        self.drain = drain

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path: str = scope.get("path", "")
        if scope["type"] != "http" or path in PROBE_PATHS:
            await self.app(scope, receive, send)
            return
        if self.drain.draining:
            refusal = ShuttingDownError(REFUSAL, retry_after=1)
            await error_response(refusal, error_body_for_path(path))(scope, receive, send)
            return
        if scope.get("method") == "GET" and path.startswith("/mcp"):
            await self.app(scope, receive, send)
            return
        await self._tracked(scope, receive, send)

    async def _tracked(self, scope: Scope, receive: Receive, send: Send) -> None:
        task = asyncio.current_task()
        responded = False
        cancelled = False

        def cut() -> None:
            nonlocal cancelled
            stream_cut: Callable[[], None] | None = scope.get(STREAM_CUT)
            if responded:
                if stream_cut is not None:
                    stream_cut()
                return  # other answers under way: uvicorn's own grace, then it closes them
            if task is not None:
                cancelled = True
                task.cancel()

        async def tracked_send(message: Message) -> None:
            nonlocal responded
            if message["type"] == "http.response.start":
                responded = True
            await send(message)

        self.drain.cuts.add(cut)
        try:
            await self.app(scope, receive, tracked_send)
        except asyncio.CancelledError:
            if not cancelled or task is None:
                raise
            task.uncancel()
            refusal = ShuttingDownError(CUT_SHORT, retry_after=1)
            await error_response(refusal, error_body_for_path(scope.get("path", "")))(
                scope, receive, send
            )
        finally:
            self.drain.cuts.discard(cut)
