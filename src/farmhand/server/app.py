"""`create_app(config)`: the ASGI app behind `farmhand serve`. No module-level state: every
app owns its ServiceState (config, providers, MCP pool), kept on `app.state.farmhand`.

Routes: OpenAI's dialect (/v1), projects (/v1/projects), Ollama's (/api), farmhand's own
MCP server (/mcp), the A2A agent (/a2a and its card, `a2aserver/endpoint.py`), the
playground page at / (`playground_api.py`). Every route sits behind
the same middleware, outermost first: `BrowserGuard` (Host and Origin: no other site's page
gets in), CORS for the operator's listed origins only, then `GateMiddleware` (API keys, body
size, strict JSON bodies), then `CancelOnDisconnect` (a request whose client left stops: its
model is free at once).

The lifespan opens the MCP pool, the /mcp session manager, the runner of the chats that
outlive their request (a Responses chat or an A2A task paused on a question) and the A2A
request handler on startup; on shutdown
(after uvicorn has let in-flight requests finish) it closes every MCP session, reaps the
server processes and closes the providers (and stops a llama-server that the llama_* tools
started, when the config has `llama_server:`).
"""

from __future__ import annotations

import importlib.metadata
from collections.abc import AsyncIterator, Iterable, Sequence
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from farmhand.a2aserver.endpoint import A2AEndpoint
from farmhand.config.models import FarmhandConfig
from farmhand.errors import RequestError
from farmhand.mcpserver.http import mcp_endpoint
from farmhand.mcpserver.llama_tools import llama_tools_for
from farmhand.mcpserver.sessions import CLIENT_KEY
from farmhand.paths import farmhand_home
from farmhand.runtime.questions import PendingAnswers
from farmhand.server import eval_reports_api, playground_api, projects_api
from farmhand.server.auth import GateMiddleware, api_keys_from_env, max_body_from_env
from farmhand.server.browser_guard import BrowserGuard, HostRule
from farmhand.server.dialect_registry import dialect_routes, error_body_for_path
from farmhand.server.disconnect import CancelOnDisconnect
from farmhand.server.errors import error_response
from farmhand.server.json_response import JSONResponse
from farmhand.server.openapi import openapi_document
from farmhand.service.loaded_models import loaded_models
from farmhand.service.state import ProviderFactory, ServiceState, default_provider_factory
from farmhand.toolsets.mcp.pool import MCPPool


def create_app(
    config: FarmhandConfig,
    *,
    home: Path | None = None,
    provider_factory: ProviderFactory | None = None,
    api_keys: Iterable[str] | None = None,
    max_body_bytes: int | None = None,
    allowed_hosts: Sequence[str] = (),
) -> Starlette:
    """The app for `config`. `api_keys` None means FARMHAND_API_KEYS plus the config's
    `server.api_keys` (none: no keys required); `max_body_bytes` None reads
    FARMHAND_MAX_REQUEST_BYTES (default 8 MiB);
    `allowed_hosts`: Host names besides loopback and the config's `server.allowed_hosts`
    that may reach the API (DNS-rebinding check)."""
    keys = (
        api_keys_from_env() | frozenset(k for k in config.server.api_keys if k)
        if api_keys is None
        else frozenset(k for k in api_keys if k)
    )
    limit = max_body_from_env() if max_body_bytes is None else max_body_bytes
    state = ServiceState(
        config=config,
        answers=PendingAnswers(timeout=config.server.question_timeout),
        home=home or farmhand_home(),
        pool=MCPPool(
            call_timeout=config.runtime.tool_timeout,
            request_idle_timeout=config.server.request_servers.idle_timeout,
            max_request_servers=config.server.request_servers.max_alive,
        ),
        provider_factory=provider_factory or default_provider_factory,
        api_keys=keys,
        models=loaded_models(config.server.engine),
    )

    llama = llama_tools_for(config.llama_server, state.home, state.policy)
    # Host and Origin of /mcp are checked by BrowserGuard, like every other route.
    mcp = mcp_endpoint(lambda: state, llama=llama, sessions=config.server.mcp_sessions)
    # The A2A agent's tasks belong to the client the gate recognised (its key's digest).
    a2a = A2AEndpoint(state, requires_keys=bool(keys), client_key=CLIENT_KEY)
    hosts = HostRule.allowing([*config.server.allowed_hosts, *allowed_hosts])
    origins = config.server.allowed_origins

    @asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        try:
            # The pool outlives the MCP sessions and the chats (paused ones end first).
            async with (
                state.pool,
                mcp.run(),
                state.chat_runner(),
                a2a.run(),  # its tasks end before the chats they read
                anyio.create_task_group() as tg,
            ):
                tg.start_soon(state.models.sweep_forever)  # keep_alive, without a request
                yield
                tg.cancel_scope.cancel()
        finally:
            try:
                await state.aclose()
            finally:
                if llama is not None:  # stops a llama-server that llama_start started
                    await llama.aclose()

    app = Starlette(
        routes=[*_routes(), *mcp.routes, *a2a.routes],
        middleware=[
            Middleware(BrowserGuard, hosts=hosts, origins=origins),
            *_cors(origins),
            Middleware(GateMiddleware, api_keys=keys, max_body_bytes=limit),
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
        Route("/health", _health, methods=["GET"]),
        Route("/openapi.json", _openapi, methods=["GET"]),
    ]


async def _health(_: Request) -> Response:
    return JSONResponse({"status": "ok"})


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
