"""Where farmhand's faces are put together over one service.

`Service` is the live state (`service.state.ServiceState`: config, providers, MCP pool,
the chats that may pause) with the llama_* tools beside it, built by `service_for` and run
by `Service.running()`. Every face that serves runs one: `create_app` (the HTTP app of
`farmhand serve`, with farmhand's own MCP server at /mcp and the A2A agent at /a2a mounted
beside the dialects' routes) and `farmhand mcp serve` (the same tools over stdio). This is
the one module that knows `server/`, `mcpserver/` and `a2aserver/` together; none of them
imports another.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import anyio
from opentelemetry.sdk.trace import TracerProvider
from starlette.applications import Starlette

from farmhand.a2aserver.endpoint import A2AEndpoint
from farmhand.config.models import FarmhandConfig
from farmhand.mcpserver.http import mcp_endpoint
from farmhand.mcpserver.llama_tools import LlamaTools, llama_tools_for
from farmhand.observability import NO_OBSERVER, Observer, observer_for
from farmhand.server.app import api_keys_for, http_app
from farmhand.server.drain import Drain
from farmhand.service.state import CLIENT_KEY, ProviderFactory, ServiceState


@dataclass(frozen=True)
class Service:
    """The state every face works on, and the llama_* tools (the config's `llama_server:`;
    None without it), which stop a llama-server they started when the service ends."""

    state: ServiceState
    llama: LlamaTools | None

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        try:
            async with self.state.running():
                yield
        finally:
            if self.llama is not None:  # stops a llama-server that llama_start started
                with anyio.CancelScope(shield=True):
                    await self.llama.aclose()


def service_for(
    config: FarmhandConfig,
    *,
    home: Path | None = None,
    provider_factory: ProviderFactory | None = None,
    api_keys: frozenset[str] = frozenset(),
    over_http: bool = True,
    observer: Observer = NO_OBSERVER,
) -> Service:
    """The service `config` describes. `over_http`: its tools are reached over the network
    (`farmhand serve`), so llama_start is held to the request policy; `farmhand mcp serve`
    answers only the client that started it. `observer`: what records its metrics and
    traces (none by default)."""
    state = ServiceState.for_config(
        config,
        home=home,
        provider_factory=provider_factory,
        api_keys=api_keys,
        observer=observer,
    )
    llama = llama_tools_for(config.llama_server, state.home, state.policy if over_http else None)
    return Service(state, llama)


def create_app(
    config: FarmhandConfig,
    *,
    home: Path | None = None,
    provider_factory: ProviderFactory | None = None,
    api_keys: Iterable[str] | None = None,
    max_body_bytes: int | None = None,
    allowed_hosts: Sequence[str] = (),
    tracer_provider: TracerProvider | None = None,
    drain: Drain | None = None,
) -> Starlette:
    """The app behind `farmhand serve` for `config`. `api_keys` None means
    FARMHAND_API_KEYS plus the config's `server.api_keys` (none: no keys required);
    `max_body_bytes`, `allowed_hosts` and `drain` as in `server.app.http_app`. Its metrics
    follow `server.metrics`; its spans go to `tracer_provider`, or without one over OTLP when
    OTEL_EXPORTER_OTLP_ENDPOINT is set (`observability.observer_for`).

    Its lifespan runs the service (MCP pool, paused chats, keep_alive sweep), then the /mcp
    session manager and the A2A request handler; on shutdown (after uvicorn has let
    in-flight requests finish) they close in the opposite order: the A2A tasks and the MCP
    sessions, the paused chats, every pooled MCP session and its server process, the
    providers, and a llama-server the llama_* tools started."""
    service = service_for(
        config,
        home=home,
        provider_factory=provider_factory,
        api_keys=api_keys_for(config, api_keys),
        observer=observer_for(
            metrics=config.server.metrics,
            models=[m.name for m in config.runtime.models] or ["default"],
            servers=[s.name for s in config.mcp.servers],
            tracer_provider=tracer_provider,
        ),
    )
    state = service.state
    # Host and Origin of /mcp are checked by BrowserGuard, like every other route.
    mcp = mcp_endpoint(lambda: state, llama=service.llama, sessions=config.server.mcp_sessions)
    # The A2A agent's tasks belong to the client the gate recognised (its key's digest).
    a2a = A2AEndpoint(state, requires_keys=bool(state.api_keys), client_key=CLIENT_KEY)

    @asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        async with service.running(), mcp.run(), a2a.run():  # A2A tasks end before chats
            yield

    return http_app(
        state,
        lifespan,
        extra_routes=[*mcp.routes, *a2a.routes],
        max_body_bytes=max_body_bytes,
        allowed_hosts=allowed_hosts,
        drain=drain,
    )
