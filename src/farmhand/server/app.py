"""`http_app(state, ...)`: the HTTP face of a running service, an ASGI app. The app
`farmhand serve` runs is assembled in `farmhand.assembly.create_app`, which builds the
state (`ServiceState.for_config`), mounts farmhand's own MCP server (/mcp) and the A2A
agent (/a2a and its card) beside the routes here, and runs them all in the lifespan it
hands in; this package knows neither of them.

Routes: OpenAI's dialect (/v1), projects (/v1/projects), Ollama's (/api), the playground
page at / (`playground_api.py`), and the `extra_routes` of the assembly. Every route sits
behind the same middleware, outermost first: `ObserveRequests` (metrics and the request's
span, when on: `observe.py`), `RequestLog` (a line per request, no header or
body in it: `request_log.py`), `BrowserGuard` (Host and Origin: no other
site's page gets in), CORS for the operator's listed origins only, then `GateMiddleware`
(API keys, body size, strict JSON bodies), then `CancelOnDisconnect` (a request whose
client left stops: its model is free at once). `DrainGate` (before the key check) refuses
new requests with a 503 once the server drains on SIGTERM (`drain.py`).

`/health` and `/ready` answer without a key and from any Host (a load balancer or a kubelet
probes with neither); they say nothing but fixed words and the configured models' names.
`/health`: the process answers (no store, no model touched). `/ready`: the store answers
and the models could serve (`service/readiness.py`), and the server is not draining; 503
with the checks that failed otherwise.
"""

from __future__ import annotations

import importlib.metadata
from collections.abc import Awaitable, Callable, Iterable, Sequence

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route
from starlette.types import Lifespan

from farmhand.config.models import FarmhandConfig
from farmhand.errors import RequestError
from farmhand.server import eval_reports_api, metrics_api, playground_api, projects_api
from farmhand.server.auth import GateMiddleware, api_keys_from_env, max_body_from_env
from farmhand.server.browser_guard import BrowserGuard, HostRule
from farmhand.server.dialect_registry import dialect_routes, error_body_for_path
from farmhand.server.disconnect import CancelOnDisconnect
from farmhand.server.drain import Drain, DrainGate
from farmhand.server.errors import error_response
from farmhand.server.json_response import JSONResponse
from farmhand.server.observe import observed_requests
from farmhand.server.openapi import openapi_document
from farmhand.server.request_log import RequestLog
from farmhand.service.readiness import readiness
from farmhand.service.state import ServiceState


def api_keys_for(config: FarmhandConfig, api_keys: Iterable[str] | None = None) -> frozenset[str]:
    """The keys the API asks for: `api_keys` when given, else FARMHAND_API_KEYS plus the
    config's `server.api_keys` (none: no keys required)."""
    if api_keys is None:
        return api_keys_from_env() | frozenset(k for k in config.server.api_keys if k)
    return frozenset(k for k in api_keys if k)


def http_app(
    state: ServiceState,
    lifespan: Lifespan[Starlette],
    *,
    extra_routes: Sequence[BaseRoute] = (),
    max_body_bytes: int | None = None,
    allowed_hosts: Sequence[str] = (),
    drain: Drain | None = None,
) -> Starlette:
    """The app over `state` (its keys: `state.api_keys`), run by `lifespan`, which must run
    the state (`state.running()`); `max_body_bytes` None reads FARMHAND_MAX_REQUEST_BYTES
    (default 8 MiB); `allowed_hosts`: Host names besides loopback and the config's
    `server.allowed_hosts` that may reach the API (DNS-rebinding check); `drain`: the state
    the server sets draining on SIGTERM (a new one, never draining, when not given)."""
    config = state.config
    drain = drain or Drain(config.server.drain_timeout)
    limit = max_body_from_env() if max_body_bytes is None else max_body_bytes
    hosts = HostRule.allowing([*config.server.allowed_hosts, *allowed_hosts])
    origins = config.server.allowed_origins
    app = Starlette(
        routes=[*_routes(), Route("/ready", _ready_endpoint(state, drain)), *extra_routes],
        middleware=[
            *observed_requests(state.observer),  # outermost: refusals are counted too
            Middleware(RequestLog),
            Middleware(BrowserGuard, hosts=hosts, origins=origins),
            *_cors(origins),
            Middleware(DrainGate, drain=drain),
            Middleware(GateMiddleware, api_keys=state.api_keys, max_body_bytes=limit),
            Middleware(CancelOnDisconnect),
        ],
        exception_handlers={HTTPException: _http_error, Exception: _unexpected},
        lifespan=lifespan,
    )
    app.state.farmhand = state
    return app


def _cors(origins: Sequence[str]) -> list[Middleware]:
    """CORS answers (preflights included) for the operator's listed origins, none otherwise."""
    if not origins:
        return []
    return [
        Middleware(
            CORSMiddleware,
            allow_origins=list(origins),
            allow_methods=["GET", "POST", "PUT", "DELETE"],
            allow_headers=["*"],
            expose_headers=["mcp-session-id"],
        )
    ]


def _routes() -> list[BaseRoute]:
    # Starlette tries the routes in order, a regex each: the dialects' come first (in
    # `dialect_registry.DIALECTS`' order), then the routes that are no dialect's.
    return [
        *dialect_routes(),
        *projects_api.routes(),
        *playground_api.routes(),
        *eval_reports_api.routes(),
        *metrics_api.routes(),
        Route("/health", _health, methods=["GET"]),
        Route("/openapi.json", _openapi, methods=["GET"]),
    ]


async def _health(_: Request) -> Response:
    return JSONResponse({"status": "ok"})


def _ready_endpoint(state: ServiceState, drain: Drain) -> Callable[[Request], Awaitable[Response]]:
    async def ready(_: Request) -> Response:
        if drain.draining:
            return JSONResponse({"status": "draining"}, status_code=503)
        result = await readiness(state)
        return JSONResponse(result.to_json(), status_code=200 if result.ready else 503)

    return ready


async def _openapi(_: Request) -> Response:
    return JSONResponse(openapi_document(importlib.metadata.version("farmhand")))


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    path = request.url.path
    if exc.status_code == 404:
        message = f"no such endpoint: {request.method} {path}"
    elif exc.status_code == 405:
        message = f"{request.method} is not allowed on {path}"
    else:
        message = exc.detail
    return error_response(RequestError(message, status=exc.status_code), error_body_for_path(path))


async def _unexpected(request: Request, exc: Exception) -> Response:
    return error_response(exc, error_body_for_path(request.url.path))
