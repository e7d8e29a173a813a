"""GET /metrics: the app's Prometheus metrics in the text format (`server.metrics`).

Behind the same gate as every route (the API key when keys are set, the Host check);
a Prometheus scrape job sends the key as `authorization: {credentials: KEY}`.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from farmhand.errors import RequestError
from farmhand.observability import CONTENT_TYPE
from farmhand.server.route_state import service_state


def routes() -> list[BaseRoute]:
    return [Route("/metrics", metrics, methods=["GET"])]


async def metrics(request: Request) -> Response:
    recorded = service_state(request).observer.metrics
    if recorded is None:
        raise RequestError(
            "metrics are off on this server; the operator turns them on with"
            " `server: {metrics: true}` in farmhand.yaml",
            code="not_found",
            status=404,
        )
    return Response(recorded.exposition(), media_type=CONTENT_TYPE)
