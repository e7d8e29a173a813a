"""One log line per request on the `farmhand.requests` logger: method, route template,
status, duration and request id (INFO when it ends; DEBUG when it starts, and for the
probes, `/health` and `/ready`, which a load balancer sends every few seconds).

The route is the template the request matched (`/v1/responses/{response_id}`), never the
path a client sent, and nothing of the headers or the body is logged: no API key, no
Authorization header, no message. The request id is the client's (or its load balancer's)
`X-Request-ID` when that is a short plain token, else a new one; it is sent back in the
response's `X-Request-ID` and set in `REQUEST_ID` for the request's own log lines (the JSON
log format writes it on each).

When `farmhand.requests` is above INFO (`--log-level warning`) the middleware costs one
level check per request.
"""

from __future__ import annotations

import logging
import re
import time
import uuid
from contextvars import ContextVar

from starlette.routing import BaseRoute, Match
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from farmhand.server.drain import PROBE_PATHS

log = logging.getLogger("farmhand.requests")

REQUEST_ID: ContextVar[str | None] = ContextVar("farmhand_request_id", default=None)
"""The id of the request whose code is running (None outside a request)."""
REQUEST_ID_HEADER = b"x-request-id"
CLIENT_ID = re.compile(rb"[A-Za-z0-9._:-]{1,128}")
"""An incoming id kept as it is: anything else (long, or with characters a log reader could
be fooled by) is replaced."""
NO_ROUTE = "(no route)"


def request_id(scope: Scope) -> str:
    """The client's X-Request-ID when it is a plain token, else a new one."""
    for name, value in scope.get("headers", []):
        if name == REQUEST_ID_HEADER and CLIENT_ID.fullmatch(value):
            return bytes(value).decode("ascii")
    return uuid.uuid4().hex


def route_template(scope: Scope) -> str:
    """The path template of the route the request matched (set by Starlette's router), or
    of the route it would have reached when a middleware refused it first (a missing key)."""
    route = scope.get("route")
    if route is None:
        route = next((r for r in _routes(scope) if r.matches(scope)[0] != Match.NONE), None)
    path = getattr(route, "path", None)
    return path if isinstance(path, str) and path else NO_ROUTE


def _routes(scope: Scope) -> list[BaseRoute]:
    app = scope.get("app")
    return list(getattr(app, "routes", []))


class RequestLog:
    """The outermost middleware: every request, refused ones included, gets its line."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        # A load balancer's probes every few seconds would drown the rest at info.
        level = logging.DEBUG if scope.get("path") in PROBE_PATHS else logging.INFO
        if scope["type"] != "http" or not log.isEnabledFor(level):
            await self.app(scope, receive, send)
            return
        rid = request_id(scope)
        token = REQUEST_ID.set(rid)
        method: str = scope.get("method", "")
        started = time.perf_counter()
        status: int | None = None

        async def logged_send(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                headers = [*message.get("headers", []), (REQUEST_ID_HEADER, rid.encode())]
                message = {**message, "headers": headers}
            await send(message)

        if log.isEnabledFor(logging.DEBUG):
            log.debug("%s request started", method, extra={"request_id": rid, "method": method})
        try:
            await self.app(scope, receive, logged_send)
        finally:
            duration_ms = round((time.perf_counter() - started) * 1000, 1)
            route = route_template(scope)
            fields = {
                "method": method,
                "route": route,
                "status": status,
                "duration_ms": duration_ms,
                "request_id": rid,
            }
            # status None: the request ended before an answer (its client left, or it failed)
            line = "%s %s %s %.1f ms"
            log.log(level, line, method, route, status or "-", duration_ms, extra=fields)
            REQUEST_ID.reset(token)
