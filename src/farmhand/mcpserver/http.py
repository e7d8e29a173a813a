"""farmhand's MCP tools over streamable HTTP at /mcp, inside the `farmhand serve` app.

Wiring (what `farmhand.assembly.create_app` does with it):

    mcp = mcp_endpoint(lambda: state, llama=...)
    routes = [..., *mcp.routes]                 # Route("/mcp"), before any catch-all
    async def lifespan(app):
        async with state.pool, mcp.run():       # pool first: it outlives the MCP sessions
            yield

The SDK's session manager runs every MCP session in a task group of its own, which exists
only inside `mcp.run()`; a request to /mcp outside it fails. `run()` may be entered once per
endpoint, so build the endpoint in `create_app` (one per app), never at module level.

Self-reference. A project may name this server's own /mcp as an MCP server. Then a
`chat_completions` call arrives on one MCP session, runs the loop in that session's handler
task, and the loop's tool calls go out through the MCP pool as a client: a second session
whose requests uvicorn serves concurrently, each handled in the session manager's task
group. Nothing is held across the loop (no lock, no single worker), so the inner calls are
answered while the outer one waits for them. (A chat that calls chat_completions on itself
recurses once per model turn; the round limit bounds each level.)

Shutdown: uvicorn lets open responses finish before the lifespan ends (which is what
closes the MCP sessions). The server therefore serves no `subscriptions/listen` (a response
that would stay open until the server stops; the pool's self-connection would hold one);
GET streams for notifications are SSE responses, which sse-starlette ends on SIGINT/SIGTERM.
`farmhand serve`'s --graceful-timeout bounds whatever else a client holds open.

DNS rebinding and web pages: inside `farmhand serve` the app's BrowserGuard checks Host
and Origin for /mcp as for every route, so the SDK's own check is off here (one rule, in
one place); see `server/browser_guard.py`.

Header values arrive without surrounding whitespace (`header_values.py`, SEP-2243).

Sessions: `server.mcp_sessions` bounds them per client and in total, with a short idle
timeout (`mcpserver.sessions.SessionLimiter` in front of the SDK's endpoint; the SDK's own
idle timer and session cap are set to the same numbers).
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass

from mcp.server.transport_security import TransportSecuritySettings
from starlette.routing import BaseRoute, Route

from farmhand.config.limits import McpSessionsConfig
from farmhand.mcpserver.farmhand_tools import StateGetter, build_server
from farmhand.mcpserver.header_values import TrimmedHeaderValues
from farmhand.mcpserver.llama_tools import LlamaTools
from farmhand.mcpserver.sessions import SessionLimiter

PATH = "/mcp"


@dataclass(frozen=True)
class McpEndpoint:
    """What the app mounts: the /mcp route(s) and the context its lifespan must enter."""

    routes: list[BaseRoute]
    run: Callable[[], AbstractAsyncContextManager[None]]
    sessions: SessionLimiter


def mcp_endpoint(
    get_state: StateGetter,
    *,
    llama: LlamaTools | None = None,
    sessions: McpSessionsConfig | None = None,
) -> McpEndpoint:
    """The /mcp endpoint over `get_state()`, for an app whose middleware checks Host and
    Origin (BrowserGuard). `llama`: add the llama_* tools; `sessions`: their bounds."""
    limits = sessions or McpSessionsConfig()
    server = build_server(get_state, llama)
    server.streamable_http_app(
        streamable_http_path=PATH,
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
        session_idle_timeout=limits.idle_timeout,
        max_sessions=limits.max_total,
    )
    manager = server.session_manager
    limiter = SessionLimiter(manager.handle_request, limits)
    route = Route(PATH, TrimmedHeaderValues(limiter))
    return McpEndpoint(routes=[route], run=manager.run, sessions=limiter)
