"""Tool search: the tools of a chat's MCP servers that match a pattern, best first.

One operation for every face: Ollama's `/api/tools` and `/api/tools/search`, and the
`search_tools` tool of farmhand's own MCP server. Servers go through the same request
policy and the same pool as a chat's. A pattern longer, or with more wildcards, than
`server.limits` allows is refused before any server is asked.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from farmhand.config.limits import LimitsConfig
from farmhand.config.models import McpServerConfig
from farmhand.errors import RequestError
from farmhand.runtime.session import ToolSettings
from farmhand.service.chat import admit_servers, server_toolsets
from farmhand.service.state import ServiceState
from farmhand.tools.definition import SEPARATOR, ToolDefinition
from farmhand.tools.glob import Glob
from farmhand.toolsets.mcp.discovery import DiscoveryToolset
from farmhand.toolsets.mcp.policy import ServerRequest


@dataclass(frozen=True)
class ToolSearch:
    """What a search found, and what went wrong on the way (servers that did not answer)."""

    pattern: str
    tools: list[ToolDefinition]
    problems: str = ""

    def to_json(self, limit: int | None = None) -> dict[str, Any]:
        """The answer every face gives: {tools: [{server, name, description, parameters,
        annotations?}],
        pattern, total, errors?}; `total` counts all matches, `limit` cuts `tools`."""
        shown = self.tools[:limit] if limit else self.tools
        body: dict[str, Any] = {
            "tools": [_tool_json(tool) for tool in shown],
            "pattern": self.pattern,
            "total": len(self.tools),
        }
        if self.problems:
            body["errors"] = self.problems
        return body


def _tool_json(tool: ToolDefinition) -> dict[str, Any]:
    found: dict[str, Any] = {
        "server": tool.name.split(SEPARATOR, 1)[0],
        "name": tool.name,
        "description": tool.description,
        "parameters": tool.parameters,
    }
    if tool.annotations:  # MCP's hints (readOnlyHint, destructiveHint, ...), when given
        found["annotations"] = tool.annotations
    return found


def model_servers(state: ServiceState, model_name: str | None) -> list[McpServerConfig]:
    """The servers a model's chats use, or every configured server when no model is named."""
    if model_name:
        return state.config.servers_for(state.model_config(model_name))
    return list(state.config.mcp.servers)


async def search_tools(
    state: ServiceState,
    pattern: str = "*",
    *,
    model: str | None = None,
    requested: Sequence[ServerRequest] = (),
    context: str = "",
) -> ToolSearch:
    """Tools of the model's servers and the `requested` ones matching `pattern`, most
    relevant first, each server a pooled session. PolicyError for refused servers,
    RequestError for a pattern beyond `server.limits`."""
    check_pattern(pattern, state.config.server.limits)
    servers = admit_servers(state, model_servers(state, model), requested)
    settings = ToolSettings(tool_timeout=state.config.runtime.tool_timeout)
    opener = server_toolsets(state, servers, settings)
    sources = [opener.source(s) for s in servers.all]
    if not sources:
        return ToolSearch(pattern, [])
    async with DiscoveryToolset(sources) as discovery:
        tools, problems = await discovery.search(pattern, context)
    return ToolSearch(pattern, tools, problems)


def check_pattern(pattern: str, limits: LimitsConfig) -> None:
    """RequestError (400) for a pattern longer, or with more wildcards, than `limits` allow."""
    if len(pattern) > limits.max_search_pattern_chars:
        raise RequestError(
            f"pattern is {len(pattern)} characters long; a tool search takes at most"
            f" {limits.max_search_pattern_chars} (the server's"
            " server.limits.max_search_pattern_chars): send a shorter pattern",
            param="pattern",
        )
    wildcards = Glob.parse(pattern).wildcards
    if wildcards > limits.max_search_wildcards:
        raise RequestError(
            f"pattern has {wildcards} wildcards (*, ?, [...]); a tool search takes at most"
            f" {limits.max_search_wildcards} (the server's server.limits.max_search_wildcards):"
            " send a pattern with fewer",
            param="pattern",
        )
