"""`farmhand mcp login NAME` and `farmhand mcp logout NAME`: the OAuth login of a server
with `auth: oauth`, kept under FARMHAND_HOME for `serve`, `chat`, `run` and `tools`.

The login opens the authorization page in a browser and waits on a loopback address for
the way back; where no browser can start (a server over SSH), it prints the URL to open.
Tokens are never printed.
"""

from __future__ import annotations

import webbrowser
from typing import Annotated

import anyio
import typer
from rich.markup import escape

from farmhand.cli.common import ConfigOption, console, err_console, project_config, user_errors
from farmhand.config.models import FarmhandConfig, McpServerConfig
from farmhand.errors import ConfigError
from farmhand.toolsets.mcp.oauth_login import LOGIN_TIMEOUT, login, logout

ServerName = Annotated[str, typer.Argument(help="The server's name in mcp.servers.")]
NoBrowser = Annotated[
    bool,
    typer.Option("--no-browser", help="Print the URL to open instead of starting a browser."),
]


def configured_server(config: FarmhandConfig, name: str) -> McpServerConfig:
    for server in config.mcp.servers:
        if server.name == name:
            return server
    names = ", ".join(s.name for s in config.mcp.servers) or "none"
    raise ConfigError(f"no MCP server named {name!r} in mcp.servers; servers: {names}")


def login_command(
    name: ServerName, no_browser: NoBrowser = False, config: ConfigOption = None
) -> None:
    """Sign in to an MCP server with `auth: oauth` (the browser flow, loopback redirect)."""
    with user_errors():
        server = configured_server(project_config(config), name)

        async def show(url: str) -> None:
            started = not no_browser and await anyio.to_thread.run_sync(webbrowser.open, url)
            lead = (
                "Your browser was opened to sign in; if it shows nothing, open"
                if started
                else "Open this URL in a browser to sign in"
            )
            err_console.print(f"{lead} to [bold]{escape(name)}[/]:", highlight=False)
            typer.echo(url, err=True)  # whole, for copying: no wrapping, no markup
            err_console.print("[dim]waiting for the browser to come back…[/]", highlight=False)

        result = anyio.run(lambda: login(server, show, connect_timeout=LOGIN_TIMEOUT + 60))
    if not result.asked:
        console.print(
            f"{escape(name)} did not ask for a login: it answered without one"
            f" ({result.tools} tools); nothing was stored",
            highlight=False,
            soft_wrap=True,
        )
        return
    console.print(
        f"signed in to {escape(name)}: {escape(result.state.describe(name))}; {result.tools} tools",
        highlight=False,
        soft_wrap=True,
    )


def logout_command(name: ServerName, config: ConfigOption = None) -> None:
    """Forget an MCP server's OAuth login (revoked at its authorization server if it can)."""
    with user_errors():
        server = configured_server(project_config(config), name)
        result = anyio.run(logout, server)
    if not result.removed:
        console.print(f"{escape(name)}: no stored login", highlight=False)
        return
    revoked = f" (revocation: {result.revoked})" if result.revoked else ""
    console.print(f"{escape(name)}: logged out{escape(revoked)}", highlight=False, soft_wrap=True)
