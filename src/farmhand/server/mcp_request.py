"""`mcp_servers` in a chat request: inline server objects as Ollama's MCP API writes them.

    {"name": "fs", "command": "npx", "args": [...], "env": {...}}
    {"name": "cal", "transport": "http" | "streamable-http" | "sse", "url": "...", "headers": {...}}

Servers from a request are held to the MCP layer's rules for servers from requests (no
unsafe commands, no shell metacharacters in arguments), checked here so a refusal is a 400
before anything starts; a request cannot opt out of them (`allow_unsafe_command` is a config
file setting only).
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from farmhand.config.models import McpServerConfig
from farmhand.errors import ConfigError
from farmhand.server.errors import RequestError
from farmhand.toolsets.mcp.security import validate_command

FIELDS = ("name", "transport", "command", "args", "env", "url", "base_url", "headers")
TRANSPORTS = {"stdio": "stdio", "http": "http", "streamable-http": "http", "sse": "sse"}


def parse_mcp_servers(value: object, param: str = "mcp_servers") -> list[McpServerConfig]:
    """The request's servers, validated; RequestError (400) names what to fix."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise RequestError(f"{param} must be a list of server objects", param=param)
    servers = [_server(item, f"{param}[{i}]") for i, item in enumerate(value)]
    seen: set[str] = set()
    for i, server in enumerate(servers):
        if server.name in seen:
            raise RequestError(
                f"{param}[{i}]: server name {server.name!r} is used twice; names must be unique",
                param=param,
            )
        seen.add(server.name)
    return servers


def _server(item: object, where: str) -> McpServerConfig:
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
    data["transport"] = TRANSPORTS[transport]
    try:
        server = McpServerConfig.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in error['loc']) or 'server'}: {error['msg']}"
            for error in exc.errors()
        )
        raise RequestError(f"{where}: {problems}", param="mcp_servers") from None
    try:
        validate_command(server, from_request=True)
    except ConfigError as exc:
        raise RequestError(str(exc), param="mcp_servers") from None
    return server
