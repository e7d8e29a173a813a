"""MCP servers a request names as tools of its own, one by one (the Responses API's `mcp`
tool): each under a label, with a list of the tools it may use and a rule for which calls
wait for the client's approval.

Unlike a request's `mcp_servers`, these tools are offered under the request's labels, and
each label's calls pass an approval gate without an approver (`toolsets.mcp.approval`): a
call its rule covers is held, the tool loop ends with it, and the client's answer comes in
a later request (`service.mcp_chat`). Every server still goes through the request policy
(`chat.admit_servers`) before anything is started or reached, and opens as a pooled
session.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass

from farmhand.config.models import McpServerConfig
from farmhand.errors import RequestError, ToolError
from farmhand.messages import ToolCall, ToolResult
from farmhand.runtime.executor import Outcome
from farmhand.runtime.session import ToolRequest, tool_settings
from farmhand.service.chat import admit_servers, server_toolsets
from farmhand.service.mcp_events import split_name
from farmhand.service.state import ServiceState
from farmhand.tools.definition import SEPARATOR, ToolDefinition
from farmhand.toolsets.base import Toolset
from farmhand.toolsets.mcp.approval import ALWAYS, ApprovalGate, ApprovalRule
from farmhand.toolsets.mcp.elicitation import Asker
from farmhand.toolsets.mcp.policy import ChatServers, ServerRequest
from farmhand.toolsets.wrappers import FilteredToolset, PrefixedToolset

__all__ = [
    "ApprovalRule",
    "ListedServer",
    "McpTool",
    "OpenMcpTools",
    "open_mcp_tools",
    "split_name",
]


@dataclass(frozen=True)
class McpTool:
    """One server a request brings as a tool: `server` is a whole definition or the name of
    one the operator defined; `allowed` (None: all) and `read_only` narrow its tools."""

    label: str
    server: ServerRequest
    allowed: frozenset[str] | None = None
    read_only: bool = False
    approval: ApprovalRule = ALWAYS

    def offers(self, tool: ToolDefinition) -> bool:
        if self.allowed is not None and tool.name not in self.allowed:
            return False
        return tool.read_only or not self.read_only


@dataclass(frozen=True)
class ListedServer:
    """A server's tools as its label offers them (names as the server writes them)."""

    label: str
    tools: tuple[ToolDefinition, ...]


class OpenMcpTools:
    """The opened servers of one chat: `toolsets` for the loop (tools under `label:tool`
    names, each label behind its approval gate, which holds a call for the client), and
    `call` for a call the client approved."""

    def __init__(self) -> None:
        self.servers: list[ListedServer] = []
        self.toolsets: list[Toolset] = []
        self._offered: dict[str, Toolset] = {}  # label -> its tools, no gate
        self._names: set[str] = set()  # exposed names

    async def add(self, spec: McpTool, toolset: Toolset) -> None:
        offered = FilteredToolset(toolset, spec.offers, "the request's mcp tool does not offer it")
        tools = tuple(await offered.list_tools())
        self._offered[spec.label] = offered
        self.servers.append(ListedServer(spec.label, tools))
        self._names.update(f"{spec.label}{SEPARATOR}{tool.name}" for tool in tools)
        gate = ApprovalGate(offered, spec.label, spec.approval, approver=None)
        self.toolsets.append(PrefixedToolset(gate, spec.label))

    def owns(self, name: str) -> bool:
        return name in self._names

    async def call(self, call: ToolCall) -> Outcome:
        """Run one approved call: the result as the model sees it (cut to the size budget)
        and in full; every failure is an error result the model can read."""
        label, tool = split_name(call.name)
        toolset = self._offered.get(label)
        if toolset is None or call.name not in self._names:
            missing = ToolResult(call.id, call.name, f"Error: there is no tool {call.name!r}", True)
            return Outcome(missing, missing)
        try:
            output = await toolset.call_tool(tool, call.arguments)
        except ToolError as exc:
            failed = ToolResult(call.id, call.name, f"Error: {exc}", is_error=True)
            return Outcome(failed, failed)
        result = ToolResult(call.id, call.name, output.text, output.is_error)
        return Outcome(result, dataclasses.replace(result, content=output.full_text or output.text))


@asynccontextmanager
async def open_mcp_tools(
    state: ServiceState,
    model_servers: Sequence[str],
    specs: Sequence[McpTool],
    asker: Asker | None = None,
) -> AsyncIterator[OpenMcpTools]:
    """The servers of `specs`, admitted by the request policy, then opened and listed.
    `model_servers`: the names of the model's own servers, which a label may not reuse;
    `asker`: who answers what these servers ask during their calls (None: no one)."""
    for spec in specs:
        if spec.label in model_servers:
            raise RequestError(
                f"mcp tool server_label {spec.label!r} names a server this model has already;"
                " its tools are offered without an mcp tool (use another label for another"
                " server)",
                param="tools",
            )
    admitted = admit_servers(state, (), [spec.server for spec in specs])
    configs = _in_request_order(specs, admitted)
    settings = tool_settings(state.config, ToolRequest(jit=False))
    opener = server_toolsets(state, admitted, settings, asker=asker)
    opened = OpenMcpTools()
    async with AsyncExitStack() as stack:
        for spec, config in zip(specs, configs, strict=True):
            toolset = await stack.enter_async_context(opener.open(config))
            await opened.add(spec, toolset)
        yield opened


def _in_request_order(specs: Sequence[McpTool], admitted: ChatServers) -> list[McpServerConfig]:
    """The admitted servers in the order of `specs` (admit_servers sorts them by the rules
    they run under)."""
    by_name = {server.name: server for server in [*admitted.trusted, *admitted.outside]}
    return [by_name[s.server if isinstance(s.server, str) else s.server.name] for s in specs]
