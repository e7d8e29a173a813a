"""What the operator's MCP servers are doing, for people watching (the playground's panel):
one entry per configured server, read from the pool without starting anything."""

from __future__ import annotations

from typing import Any

from farmhand.errors import ConfigError
from farmhand.service.state import ServiceState
from farmhand.toolsets.mcp.security import validate_command


def server_statuses(state: ServiceState) -> list[dict[str, Any]]:
    """`[{name, transport, state, require_approval, restarts, error}]`, where state is
    running, idle, restarting, closed, or refused (farmhand will not start its command)."""
    statuses = []
    for server in state.config.mcp.servers:
        entry: dict[str, Any] = {
            "name": server.name,
            "transport": server.transport,
            "require_approval": server.require_approval,
            "state": "idle",
            "restarts": 0,
            "error": None,
        }
        try:
            validate_command(server)
        except ConfigError as exc:
            entry.update(state="refused", error=str(exc))
            statuses.append(entry)
            continue
        connection = state.pool.find(server)
        if connection is not None:
            entry.update(
                state=connection.status,
                restarts=connection.restarts,
                error=connection.last_error if connection.status == "restarting" else None,
            )
        statuses.append(entry)
    return statuses
