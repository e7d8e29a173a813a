"""Sessions of /mcp bounded per client and in total, so no client can lock others out.

Left to the MCP SDK, each `initialize` opens a session that lives until its client deletes
it or it goes unused for 30 minutes, up to 10,000 of them: one client that sent 10,000
initialize calls in 25 s took 343 MiB, and every other client got 503 "Too many open
sessions" for half an hour. `SessionLimiter` wraps the SDK's endpoint and keeps its own
table of the sessions it saw opened, each with its client and the time it was last used:

- A client (the API key it passed the gate with, which `server.auth` notes in the request's
  scope under `CLIENT_KEY`, or its address when the server has no keys) holds at most
  `max_per_client` sessions: opening another first closes its own least recently used one
  (idle ones before those with a request in flight). A client that opens sessions in a
  loop only ever replaces its own.
- At most `max_total` sessions are open: opening another closes the least recently used
  one of any client.
- A session without a request for `idle_timeout` seconds is closed (the SDK's own timer,
  set to the same value; the table forgets it at the next opening).

A closed session answers 404, on which an MCP client opens a new one. Closing goes through
the SDK's own door, a DELETE with the session's id, so its bookkeeping stays its own.
Only when every slot is taken by sessions still being opened is a request refused (429 for
the client's own slots, 503 for all of them), with a JSON-RPC error saying which bound.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from farmhand.config.limits import McpSessionsConfig
from farmhand.service.state import CLIENT_KEY

SESSION_HEADER = b"mcp-session-id"
INVALID_REQUEST = -32600


@dataclass
class _Session:
    client: str
    last_used: float
    in_flight: int = 0


class SessionLimiter:
    """ASGI wrapper around the SDK's streamable HTTP endpoint (see the module's doc)."""

    def __init__(
        self,
        app: ASGIApp,
        limits: McpSessionsConfig,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.app = app
        self.limits = limits
        self.clock = clock
        self.sessions: dict[str, _Session] = {}
        self.opening: Counter[str] = Counter()
        self.closed = 0
        """How many sessions this closed to make room or because they went idle."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        session_id = _header(scope.get("headers", []), SESSION_HEADER)
        if session_id is None and scope.get("method") == "POST":
            await self._open(scope, receive, send)
        else:
            await self._use(session_id, scope, receive, send)

    @staticmethod
    def client_of(scope: Scope) -> str:
        """The API key the request passed the gate with, else its address."""
        key = scope.get(CLIENT_KEY)
        if key:
            return f"key:{key}"
        client = scope.get("client")
        return f"address:{client[0] if client else 'unknown'}"

    async def _open(self, scope: Scope, receive: Receive, send: Send) -> None:
        client = self.client_of(scope)
        stale = self._stale()
        refusal = self._refusal(client)
        if refusal is not None:
            await self._close_all(stale)
            await refusal(scope, receive, send)
            return
        victims = stale + self._victims(client)
        self.opening[client] += 1  # a slot held from here, before any await
        opened: str | None = None

        def settle() -> None:  # the slot is a session now, or nothing
            self.opening[client] -= 1
            if not self.opening[client]:
                del self.opening[client]

        async def watch(message: Message) -> None:
            nonlocal opened
            if message["type"] == "http.response.start" and message["status"] < 400:
                opened = _header(message.get("headers", []), SESSION_HEADER)
                if opened is not None:
                    self.sessions[opened] = _Session(client, self.clock(), in_flight=1)
                    settle()
            await send(message)

        try:
            await self._close_all(victims)
            await self.app(scope, receive, watch)
        finally:
            if opened is None:  # refused, failed or cancelled: no session came of it
                settle()
            self._done(opened)

    async def _use(
        self, session_id: str | None, scope: Scope, receive: Receive, send: Send
    ) -> None:
        session = self.sessions.get(session_id) if session_id else None
        if session is not None:
            session.in_flight += 1
            session.last_used = self.clock()
        status = 0

        async def watch(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, watch)
        finally:
            self._done(session_id)
            ended = (scope.get("method") == "DELETE" and status < 400) or status == 404
            if session_id and ended:
                self.sessions.pop(session_id, None)

    def _done(self, session_id: str | None) -> None:
        session = self.sessions.get(session_id) if session_id else None
        if session is not None:
            session.in_flight -= 1
            session.last_used = self.clock()

    def _stale(self) -> list[str]:
        """Sessions idle past the timeout (the SDK ends them; the table forgets them)."""
        oldest = self.clock() - self.limits.idle_timeout
        stale = [
            sid for sid, s in self.sessions.items() if not s.in_flight and s.last_used < oldest
        ]
        for sid in stale:
            del self.sessions[sid]
        return stale

    def _refusal(self, client: str) -> JSONResponse | None:
        """A refusal when the slots that would have to be freed are all still opening."""
        if self.opening[client] >= self.limits.max_per_client:
            return _error(
                429,
                f"this client is already opening {self.opening[client]} MCP sessions, its"
                f" limit (server.mcp_sessions.max_per_client: {self.limits.max_per_client});"
                " wait for them to open, then reuse one",
            )
        if sum(self.opening.values()) >= self.limits.max_total:
            return _error(
                503,
                f"{self.limits.max_total} MCP sessions are being opened at once, the server's"
                " limit (server.mcp_sessions.max_total); try again in a moment",
            )
        return None

    def _victims(self, client: str) -> list[str]:
        """Sessions to close so one more fits, taken out of the table at once (so two
        openings never pick the same one)."""
        victims: list[str] = []
        mine = [sid for sid, s in self.sessions.items() if s.client == client]
        while mine and len(mine) + self.opening[client] >= self.limits.max_per_client:
            victims.append(self._take(mine))
        others = list(self.sessions)
        while others and len(others) + sum(self.opening.values()) >= self.limits.max_total:
            victims.append(self._take(others))
        return victims

    def _take(self, candidates: list[str]) -> str:
        """The least recently used of `candidates`, idle ones first, out of the table."""
        chosen = min(
            candidates,
            key=lambda sid: (self.sessions[sid].in_flight > 0, self.sessions[sid].last_used),
        )
        candidates.remove(chosen)
        del self.sessions[chosen]
        return chosen

    async def _close_all(self, session_ids: list[str]) -> None:
        for session_id in session_ids:
            await self._close(session_id)

    async def _close(self, session_id: str) -> None:
        """End a session as its client would: a DELETE through the SDK."""
        scope: Scope = {
            "type": "http",
            "asgi": {"version": "3.0"},
            "http_version": "1.1",
            "method": "DELETE",
            "scheme": "http",
            "path": "/mcp",
            "raw_path": b"/mcp",
            "root_path": "",
            "query_string": b"",
            "headers": [(SESSION_HEADER, session_id.encode())],
            "client": None,
            "server": None,
        }

        async def receive() -> Message:
            return {"type": "http.request", "body": b"", "more_body": False}

        async def discard(_: Message) -> None:
            return None

        await self.app(scope, receive, discard)
        self.closed += 1


def _header(headers: Iterable[tuple[bytes, bytes]], name: bytes) -> str | None:
    for key, value in headers:
        if key.lower() == name:
            return bytes(value).decode("latin-1")
    return None


def _error(status: int, message: str) -> JSONResponse:
    """A JSON-RPC error without a request id, as the SDK answers /mcp refusals."""
    body = {"jsonrpc": "2.0", "id": None, "error": {"code": INVALID_REQUEST, "message": message}}
    return JSONResponse(body, status_code=status)
