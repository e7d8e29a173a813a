"""`mcp_servers` in a request: inline server objects as Ollama's MCP API writes them, or
the name of a server the operator defined.

    "time"  or  {"name": "time"}                       the operator's server of that name
    {"name": "fs", "command": "npx", "args": [...], "env": {...}}
    {"name": "cal", "transport": "http" | "streamable-http" | "sse", "url": "...", "headers": {...}}

This module reads the shape only (400 for what is malformed). Whether a request may start or
reach what it names is the request policy's call (`toolsets.mcp.policy`), made once for every
dialect before anything starts; a request cannot opt out of it (`allow_unsafe_command` is a
config file setting only).
"""

from __future__ import annotations

from typing import Any, get_args

from pydantic import ValidationError

from farmhand.config.models import TRANSPORT_ALIASES, McpServerConfig, Transport
from farmhand.errors import RequestError
from farmhand.toolsets.mcp.policy import ServerRequest

FIELDS = ("name", "transport", "command", "args", "env", "url", "base_url", "headers")
TRANSPORTS = (*get_args(Transport), *TRANSPORT_ALIASES)


def parse_mcp_servers(value: object, param: str = "mcp_servers") -> list[ServerRequest]:
    """The request's servers as written (names stay names); RequestError (400) names what
    to fix."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise RequestError(f"{param} must be a list of server objects", param=param)
    servers = [_server(item, f"{param}[{i}]") for i, item in enumerate(value)]
    seen: set[str] = set()
    for i, server in enumerate(servers):
        name = server if isinstance(server, str) else server.name
        if name in seen:
            raise RequestError(
                f"{param}[{i}]: server name {name!r} is used twice; names must be unique",
                param=param,
            )
        seen.add(name)
    return servers


def _server(item: object, where: str) -> ServerRequest:
    if isinstance(item, str) and item:
        return item
    if isinstance(item, dict) and set(item) == {"name"} and isinstance(item["name"], str):
        return item["name"]
    if not isinstance(item, dict):
        raise RequestError(
            f'{where} must be an object like {{"name": "fs", "command": "npx", "args": [...]}}',
            param="mcp_servers",
        )
    unknown = sorted(set(item) - set(FIELDS))
    if unknown:
        hint = (
            "; allow_unsafe_command can only be set in the server's config file"
            if "allow_unsafe_command" in unknown
            else ""
        )
        raise RequestError(
            f"{where} has unknown field(s) {', '.join(unknown)}; accepted: {', '.join(FIELDS)}"
            + hint,
            param="mcp_servers",
        )
    data: dict[str, Any] = {k: v for k, v in item.items() if k not in ("url", "transport")}
    url = item.get("url", item.get("base_url"))
    if url is not None:
        data["base_url"] = url
    transport = item.get("transport")
    if transport is None:
        transport = "http" if url is not None and item.get("command") is None else "stdio"
    if transport not in TRANSPORTS:
        raise RequestError(
            f"{where}.transport is {transport!r}; use one of {', '.join(TRANSPORTS)}",
            param="mcp_servers",
        )
    data["transport"] = transport  # an alias is read by McpServerConfig itself
    try:
        server = McpServerConfig.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in error['loc']) or 'server'}: {error['msg']}"
            for error in exc.errors()
        )
        raise RequestError(f"{where}: {problems}", param="mcp_servers") from None
    return server
