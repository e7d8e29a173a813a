"""`farmhand mcp login` / `logout`: the OAuth login of a configured server (mcp_login.py).
`farmhand mcp serve`: farmhand's own tools (projects, chat, models, tool search) as an MCP
server over stdio, for clients that start their servers as processes (Claude Desktop,
Cursor, the MCP inspector). `farmhand mcp llama`: the 19 llama_* tools for llama.cpp's
llama-server, the same way. stdout carries the protocol; everything else goes to stderr.
"""

from __future__ import annotations

from typing import Annotated

import anyio
import typer

from farmhand.cli.common import (
    ConfigOption,
    LogLevelOption,
    project_config,
    quiet_logging,
    user_errors,
)
from farmhand.cli.mcp_login import login_command, logout_command
from farmhand.config.models import FarmhandConfig
from farmhand.llamaserver.settings import LlamaServerSettings
from farmhand.paths import farmhand_home

mcp_app = typer.Typer(no_args_is_help=True)
mcp_app.command("login")(login_command)
mcp_app.command("logout")(logout_command)


@mcp_app.command("serve")
def serve(config: ConfigOption = None, log_level: LogLevelOption = "warning") -> None:
    """Serve farmhand's tools over stdio (for `command: farmhand, args: [mcp, serve]`)."""
    with user_errors():
        quiet_logging(log_level)  # stderr is the client's log: no line per backend request
        cfg = project_config(config)
        anyio.run(_serve, cfg)


async def _serve(config: FarmhandConfig) -> None:
    from farmhand.assembly import service_for
    from farmhand.mcpserver.farmhand_tools import build_server

    # The same service as `farmhand serve`'s (the pool bounds a request's servers alike);
    # only this one client reaches it.
    service = service_for(config, over_http=False)
    server = build_server(lambda: service.state, service.llama)
    async with service.running():
        await server.run_stdio_async()


@mcp_app.command("llama")
def llama(
    url: Annotated[
        str | None,
        typer.Option(
            help="llama-server's URL. Default: $LLAMA_SERVER_URL, else http://127.0.0.1:8080."
        ),
    ] = None,
    timeout: Annotated[
        int | None,
        typer.Option(
            help="Request timeout in ms. Default: $LLAMA_SERVER_TIMEOUT, else 30000.", min=1
        ),
    ] = None,
) -> None:
    """Serve the llama_* tools for llama.cpp's llama-server over stdio (LLAMA_API_KEY, when
    set, is sent as a Bearer token). A server started with llama_start stops with this one."""
    with user_errors():
        settings = LlamaServerSettings.from_env().overridden(url=url, timeout_ms=timeout)
        quiet_logging()  # stderr is the client's log: no line per llama-server request
        anyio.run(_serve_llama, settings)


async def _serve_llama(settings: LlamaServerSettings) -> None:
    from farmhand.mcpserver.llama_tools import LlamaTools, build_llama_server

    tools = LlamaTools(settings, log_dir=farmhand_home() / "logs")
    try:
        await build_llama_server(tools).run_stdio_async()
    finally:
        with anyio.CancelScope(shield=True):
            await tools.aclose()
