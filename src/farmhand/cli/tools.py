"""`farmhand tools`: list, search and call MCP tools directly, with no model involved.

The servers are the config's `mcp.servers` plus those the definitions turn on for
`--tools PATH` (without it, those marked `auto_enable: always`). You are the caller here,
so the whole tool set is shown (a model given `--tools` gets only the read-only file
tools); relative paths still mean this folder. `list` shows each server's description and
capabilities first; `search` matches them too.
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Annotated, Any, TypeVar

import anyio
import typer
from rich.markup import escape

from farmhand.cli.common import (
    ConfigOption,
    console,
    err_console,
    fail,
    project_config,
    user_errors,
)
from farmhand.cli.service import command_service
from farmhand.config.models import McpServerConfig
from farmhand.errors import ConfigError
from farmhand.runtime.session import ServerToolsets, ToolSettings, tool_settings
from farmhand.runtime.tool_paths import servers_for_path
from farmhand.tools.definition import SEPARATOR, ToolDefinition
from farmhand.tools.schema import validate_arguments
from farmhand.toolsets.mcp.discovery import DiscoveryToolset, ServerSource
from farmhand.toolsets.mcp.oauth_store import auth_description
from farmhand.toolsets.mcp.transports import where

T = TypeVar("T")
ToolListing = tuple[list[ToolDefinition], list[str]]

tools_app = typer.Typer(no_args_is_help=True, help="List, search and call MCP tools (no model).")

ToolsPath = Annotated[
    Path | None,
    typer.Option("--tools", help="Also the servers the definitions turn on for this path."),
]


@tools_app.command("list")
def list_command(tools: ToolsPath = None, config: ConfigOption = None) -> None:
    """Each server with what it is for, then every tool, as `server:tool  description`."""

    async def listing(jit: DiscoveryToolset) -> tuple[list[ServerSource], ToolListing]:
        return jit.sources, await jit.all_tools()

    servers, (found, problems) = _with_servers(tools, config, listing)
    _warn(problems)
    print_servers(servers)
    print_tools(found)


@tools_app.command("servers")
def servers_command(config: ConfigOption = None) -> None:
    """Each configured server: how it is reached and how it signs in (OAuth state)."""
    with user_errors():
        cfg = project_config(config)
    if not cfg.mcp.servers:
        console.print("no MCP servers in mcp.servers", highlight=False)
        return
    width = max(len(s.name) for s in cfg.mcp.servers)
    for server in cfg.mcp.servers:
        place = where(server)
        console.print(
            f"[cyan]{escape(server.name.ljust(width))}[/]  {escape(place)}  "
            f"{escape(auth_description(server))}",
            highlight=False,
            soft_wrap=True,
        )


@tools_app.command("search")
def search_command(
    pattern: Annotated[str, typer.Argument(help="Glob over server:tool names and descriptions.")],
    tools: ToolsPath = None,
    config: ConfigOption = None,
) -> None:
    """The tools matching PATTERN, most relevant first (what mcp_discover would offer)."""
    found, problems = _with_servers(tools, config, lambda jit: jit.search(pattern))
    _warn([problems] if problems else [])
    if not found:
        fail(f"no tool matches {pattern!r}; try a broader pattern such as '*'")
    print_tools(found)


@tools_app.command("call")
def call_command(
    name: Annotated[str, typer.Argument(help="The tool, as SERVER:TOOL.")],
    arguments: Annotated[
        list[str] | None,
        typer.Argument(help="key=value pairs; values are read as JSON when they parse."),
    ] = None,
    tools: ToolsPath = None,
    config: ConfigOption = None,
) -> None:
    """Call one tool and print its result."""
    with user_errors():
        server, _, tool = name.partition(SEPARATOR)
        if not server or not tool:
            raise ConfigError(
                f"{name!r}: name the tool as SERVER:TOOL, e.g. filesystem:list_directory"
            )
        values = parse_arguments(arguments or [])

    async def call(jit: DiscoveryToolset) -> tuple[str, bool]:
        listed, problems = await jit.all_tools()
        definition = next((t for t in listed if t.name == name), None)
        if definition is None:
            known = [
                t.name.partition(SEPARATOR)[2]
                for t in listed
                if t.name.startswith(server + SEPARATOR)
            ]
            why = (
                f"its tools: {', '.join(known)}"
                if known
                else "; ".join(problems) or "it lists none"
            )
            raise ConfigError(f"server {server!r} has no tool {tool!r} ({why})")
        if problem := validate_arguments(definition, values):
            # The message is written for a model (one bullet per field); one line here.
            fields = [ln[2:] for ln in problem.splitlines() if ln.startswith("- ")]
            raise ConfigError(f"{name}: {'; '.join(fields) or problem} (give key=value pairs)")
        output = await jit.call_tool(name, values)
        return output.full_text or output.text, output.is_error

    text, is_error = _with_servers(tools, config, call, only=server)
    if is_error:
        fail(" ".join(text.split()) or "the tool reported an error")
    print(text)


def parse_arguments(pairs: Sequence[str]) -> dict[str, Any]:
    """`key=value` pairs; a value is JSON when it parses as JSON (3, true, ["a"]), else text."""
    values: dict[str, Any] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep or not key:
            raise ConfigError(f"argument {pair!r} must be key=value, e.g. path=.")
        try:
            values[key] = json.loads(raw)
        except json.JSONDecodeError:
            values[key] = raw
    return values


def _with_servers(
    path: Path | None,
    config: Path | None,
    use: Callable[[DiscoveryToolset], Awaitable[T]],
    only: str | None = None,
) -> T:
    """Run `use` with the servers reachable lazily through one DiscoveryToolset."""
    with user_errors():
        cfg = project_config(config)
        servers: list[McpServerConfig] = list(cfg.mcp.servers)
        # Without --tools, the definitions marked `auto_enable: always` still start (as in
        # `farmhand run`).
        found = servers_for_path(path)
        _warn(found.notes)
        servers += [s for s in found.servers if s.name not in {c.name for c in servers}]
        folder = found.folder_servers
        if not servers:
            raise ConfigError("no MCP servers: add --tools PATH, or mcp.servers to the config")
        if only is not None:
            if only not in {s.name for s in servers}:
                names = ", ".join(s.name for s in servers)
                raise ConfigError(f"no MCP server named {only!r}; servers: {names}")
            servers = [s for s in servers if s.name == only]
        settings: ToolSettings = tool_settings(cfg)

        async def main() -> T:
            # The servers are the service's pooled sessions, as in every other command.
            async with command_service(cfg, progress=False) as state:
                opener = ServerToolsets(settings, folder, read_only_folders=False, pool=state.pool)
                async with DiscoveryToolset([opener.source(s) for s in servers]) as jit:
                    return await use(jit)

        return anyio.run(main)


def print_servers(servers: Sequence[ServerSource]) -> None:
    """One line per server: its name, its description and capabilities (from its definition
    or the config), then a blank line before the tools."""
    width = max((len(s.name) for s in servers), default=0)
    for server in servers:
        tags = f" [dim]({escape(', '.join(server.capabilities))})[/]" if server.capabilities else ""
        console.print(
            f"[bold]{escape(server.name.ljust(width))}[/]  {escape(server.description)}{tags}",
            highlight=False,
            soft_wrap=True,
        )
    console.print()


def print_tools(tools: Sequence[ToolDefinition]) -> None:
    """One line per tool: its name and the first sentence of its description."""
    width = max((len(t.name) for t in tools), default=0)
    for tool in tools:
        console.print(
            f"[cyan]{escape(tool.name.ljust(width))}[/]  {escape(summary(tool.description))}",
            highlight=False,
            soft_wrap=True,
        )


def summary(description: str, limit: int = 100) -> str:
    """The first sentence of a description, cut to `limit` characters."""
    text = " ".join(description.split())
    sentence = re.split(r"(?<=[.!?])\s", text, maxsplit=1)[0]
    return sentence if len(sentence) <= limit else sentence[: limit - 1].rstrip() + "…"


def _warn(problems: Sequence[str]) -> None:
    for problem in problems:
        err_console.print(
            f"[yellow]warning:[/] {escape(' '.join(problem.split()))}", soft_wrap=True
        )
