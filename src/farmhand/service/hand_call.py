"""Calling one tool of an operator's MCP server by hand (the playground's tool form):
the same pooled session, wrappers and request policy as a chat's call, without a model.

A server whose `require_approval` asks before a call runs is answered by the request
itself: `approved` true is the person's yes (the page asks them first), false a no.
Questions the server asks during the call (elicitation) are declined: only a chat over
the Responses API can pause for them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from farmhand.errors import RequestError
from farmhand.runtime.session import ToolSettings
from farmhand.service.chat import admit_servers, server_toolsets
from farmhand.service.state import ServiceState
from farmhand.toolsets.base import ToolOutput
from farmhand.toolsets.mcp.elicitation import Answer, Question

NOT_HERE = (
    "a tool called by hand cannot ask questions; ask the model to call it in a chat, where"
    " the playground shows the server's form"
)


@dataclass(frozen=True)
class HandCallAsker:
    """Answers the approval the server's policy asks for with the request's own choice."""

    approved: bool

    async def __call__(self, question: Question) -> Answer:
        if question.kind != "approval":
            return Answer("decline", reason=NOT_HERE, refused=True)
        if self.approved:
            return Answer.accept()
        return Answer(
            "decline",
            reason="the call was sent without approved: true (the person's confirmation)",
            refused=True,
        )


async def call_by_hand(
    state: ServiceState, server_name: str, tool: str, arguments: dict[str, Any], approved: bool
) -> ToolOutput:
    """Runs `tool` of the configured server `server_name`; RequestError (404) for a server
    the config does not have, PolicyError for one the request policy refuses."""
    server = next((s for s in state.config.mcp.servers if s.name == server_name), None)
    if server is None:
        names = ", ".join(s.name for s in state.config.mcp.servers) or "none"
        raise RequestError(
            f"no configured MCP server is named {server_name!r} (configured: {names});"
            " GET /api/mcp/servers lists them",
            param="server",
            status=404,
        )
    servers = admit_servers(state, [server])
    settings = ToolSettings(
        tool_timeout=state.config.runtime.tool_timeout,
        max_tool_result_chars=state.config.runtime.max_tool_result_chars,
    )
    opener = server_toolsets(state, servers, settings, asker=HandCallAsker(approved))
    admitted = servers.all[0]
    async with opener.open(admitted) as toolset:
        return await toolset.call_tool(tool, arguments)
