"""Every HTTP request, watched: `farmhand_requests_total`, the first-byte and duration
histograms, and a span per request (`observability.RequestWatch`).

The outermost middleware, so refusals (a missing key, a foreign Host) are counted too. The
route label is the template of the route that answered (`/v1/projects/{name}`), read from
the scope after routing; `none` for a request refused before routing or matched by no
route. Nothing is added when the server records neither metrics nor traces.
"""

from __future__ import annotations

from starlette.middleware import Middleware
from starlette.routing import BaseRoute
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from farmhand.observability import Observer, Recorder
from farmhand.server.dialect_registry import DIALECTS

NO_ROUTE = "none"
NO_DIALECT = "none"
TRACE_HEADERS = (b"traceparent", b"tracestate")
CLIENT_LEFT = 499  # the status nginx logs for a client that went away before the answer


def observed_requests(observer: Observer) -> list[Middleware]:
    """The middleware for `observer`'s app: none when it watches nothing."""
    if not isinstance(observer, Recorder):
        return []
    return [Middleware(ObserveRequests, recorder=observer)]


def dialect_of(path: str) -> str:
    return next((d.name for d in DIALECTS if d.owns(path)), NO_DIALECT)


class ObserveRequests:
    def __init__(self, app: ASGIApp, *, recorder: Recorder) -> None:
        self.app = app
        self.recorder = recorder
        # By the id of each of the app's routes (bounded; a Route is not hashable).
        self.labels: dict[int, tuple[str, str]] = {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path: str = scope.get("path", "")
        carrier = self._trace_headers(scope) if self.recorder.tracer is not None else {}
        watch = self.recorder.request(scope.get("method", ""), path, carrier)
        status = 0

        async def sending(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            elif message["type"] == "http.response.body" and message.get("body"):
                watch.first_byte()
            await send(message)

        watch.start()
        try:
            await self.app(scope, receive, sending)
        except BaseException:
            status = status or CLIENT_LEFT  # cancelled; an error is answered as a 500
            raise
        finally:
            dialect, route = self._labels(scope.get("route"), path)
            watch.finish(dialect, route, status or 500)

    def _labels(self, route: BaseRoute | None, path: str) -> tuple[str, str]:
        if route is None:
            return dialect_of(path), NO_ROUTE
        known = self.labels.get(id(route))
        if known is None:
            template = getattr(route, "path", None) or NO_ROUTE
            known = self.labels[id(route)] = (dialect_of(template), template)
        return known

    @staticmethod
    def _trace_headers(scope: Scope) -> dict[str, str]:
        return {
            name.decode("latin-1"): bytes(value).decode("latin-1")
            for name, value in scope.get("headers", [])
            if name in TRACE_HEADERS
        }
