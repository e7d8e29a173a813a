"""`farmhand mcp serve`: farmhand's own tools (projects, chat, models, tool search) as an MCP
server over stdio, for clients that start their servers as processes (Claude Desktop,
Cursor, the MCP inspector). stdout carries the protocol; everything else goes to stderr.
"""

from __future__ import annotations

import anyio
import typer

from farmhand.cli.common import ConfigOption, user_errors
from farmhand.config.loader import find_config, load_config
from farmhand.config.models import FarmhandConfig
from farmhand.paths import farmhand_home

mcp_app = typer.Typer(no_args_is_help=True)


@mcp_app.command("serve")
def serve(config: ConfigOption = None) -> None:
    """Serve farmhand's tools over stdio (for `command: farmhand, args: [mcp, serve]`)."""
    with user_errors():
        cfg = load_config(find_config(config))
        anyio.run(_serve, cfg)


async def _serve(config: FarmhandConfig) -> None:
    from farmhand.mcpserver.farmhand_tools import build_server
    from farmhand.server.state import ServerState
    from farmhand.toolsets.mcp.pool import MCPPool

    state = ServerState(
        config=config,
        home=farmhand_home(),
        pool=MCPPool(call_timeout=config.runtime.tool_timeout),
    )
    server = build_server(lambda: state)
    try:
        async with state.pool:
            await server.run_stdio_async()
    finally:
        await state.aclose()
