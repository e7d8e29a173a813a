"""What one chat gets from the config, the same on every face: its servers, prompts, tool
settings and round limit, read in one place (`chat_setup`), and its tools for as long as it
runs (`open_tools`: the servers as the service pool's sessions under farmhand's wrappers,
`open_router`, and the tool_choice resolved by the router). The chat itself runs in the
service (`service.chat.run_chat`), which provides the model and admits the servers."""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path

from farmhand.config.limits import SavedResultsConfig
from farmhand.config.models import FarmhandConfig, McpServerConfig, ModelConfig
from farmhand.errors import RequestError, UnknownToolError
from farmhand.messages import Message
from farmhand.providers.base import GenerationSettings
from farmhand.rag.library import Library
from farmhand.rag.toolset import RagToolset
from farmhand.runtime.executor import ToolRouter
from farmhand.tools.definition import ToolDefinition
from farmhand.toolsets.base import Toolset
from farmhand.toolsets.mcp.approval import gated
from farmhand.toolsets.mcp.discovery import DiscoveryToolset, ServerSource
from farmhand.toolsets.mcp.elicitation import NO_ONE, Asker
from farmhand.toolsets.mcp.pool import MCPPool
from farmhand.toolsets.saved_results import ResultArchive
from farmhand.toolsets.wrappers import (
    DEFAULT_MAX_RESULT_CHARS,
    CappedResults,
    FilteredToolset,
    PrefixedToolset,
    WorkingDirPaths,
    read_only_current,
)

log = logging.getLogger(__name__)


@dataclass
class ToolSettings:
    """How a session offers and runs MCP tools (from `runtime:` in the config)."""

    tool_timeout: float = 30.0
    max_tool_result_chars: int = DEFAULT_MAX_RESULT_CHARS
    saved_results: SavedResultsConfig = field(default_factory=SavedResultsConfig)
    jit_tools: bool = False
    jit_max_tools: int = 5
    jit_connect_eager: bool = False


@dataclass(frozen=True)
class ToolRequest:
    """What a caller asks of a chat's tools and rounds in the config's place (a request's
    fields, `farmhand run --jit`); None leaves the config's."""

    jit: bool | None = None
    tool_timeout: float | None = None
    jit_max_tools: int | None = None
    jit_connect_eager: bool | None = None
    max_tool_rounds: int | None = None


@dataclass
class ServerToolsets:
    """Opens MCP servers with farmhand's wrappers: results capped to the budget and, for
    servers started for a folder the user named (--tools DIR), relative paths read as the
    user's working directory and only read-only tools offered.

    The servers are the `pool`'s sessions (the service's, on every face: long-lived under
    `farmhand serve`, closed with a command's service in the CLI); `outside` names the
    servers that came from a request rather than the operator's config: the pool bounds
    them, and they offer only read-only tools unless `read_only_outside` is off.

    `asker` answers what the servers ask during this chat's calls (elicitation) and the
    approvals their `require_approval` calls for: the terminal, or the API's pause (see
    runtime/questions.py); None leaves it to the pool's (by default: no one can answer)."""

    settings: ToolSettings = field(default_factory=ToolSettings)
    folder_servers: frozenset[str] = frozenset()
    read_only_folders: bool = True
    pool: MCPPool = field(kw_only=True)
    outside: frozenset[str] = frozenset()
    read_only_outside: bool = True
    allowed_tools: Mapping[str, frozenset[str]] = field(default_factory=dict)
    """Server name -> the only tools of it offered (a request's `allowed_tools`)."""
    asker: Asker | None = None

    @asynccontextmanager
    async def open(self, server: McpServerConfig) -> AsyncIterator[Toolset]:
        """One server's tools under their own names, for as long as the context lasts."""
        from_request = server.name in self.outside or server.name in self.folder_servers
        pooled = self.pool.toolset(
            server,
            call_timeout=self.settings.tool_timeout,
            from_request=from_request,
            asker=self.asker,
        )
        yield self.wrap(server.name, gated(pooled, server, self.asker or NO_ONE))

    def wrap(self, name: str, toolset: Toolset) -> Toolset:
        inner: Toolset = toolset
        if (allowed := self.allowed_tools.get(name)) is not None:
            inner = FilteredToolset(
                inner, lambda tool: tool.name in allowed, "the request allows only some tools"
            )
        if name in self.folder_servers:
            inner = WorkingDirPaths(inner, Path.cwd())
            if self.read_only_folders:
                inner = FilteredToolset(
                    inner, read_only_current, "--tools gives the model read-only access"
                )
        elif name in self.outside and self.read_only_outside:
            inner = FilteredToolset(
                inner,
                read_only_current,
                "servers a request brings offer only read-only tools"
                " (server.request_servers.allow_writes)",
            )
        archive = ResultArchive(limits=self.settings.saved_results)
        return CappedResults(inner, self.settings.max_tool_result_chars, archive)

    async def enter_all(
        self, stack: AsyncExitStack, servers: Sequence[McpServerConfig]
    ) -> list[Toolset]:
        """Every server, as toolsets ready for a ToolRouter: one DiscoveryToolset with JIT,
        else each server's tools up front under `server:` prefixes."""
        if self.settings.jit_tools:
            discovery = DiscoveryToolset(
                [self.source(s) for s in servers],
                max_tools=self.settings.jit_max_tools,
                connect_eager=self.settings.jit_connect_eager,
            )
            return [await stack.enter_async_context(discovery)] if servers else []
        toolsets: list[Toolset] = []
        for server in servers:
            toolset = await stack.enter_async_context(self.open(server))
            toolsets.append(PrefixedToolset(toolset, server.name))
        return toolsets

    def source(self, server: McpServerConfig) -> ServerSource:
        return ServerSource(
            server.name,
            server.description,
            lambda: self.open(server),
            capabilities=tuple(server.capabilities),
        )


async def open_router(
    stack: AsyncExitStack,
    opener: ServerToolsets,
    servers: Sequence[McpServerConfig],
    client_tools: Sequence[ToolDefinition] = (),
    builtin: Sequence[Toolset] = (),
) -> ToolRouter:
    """The one way a conversation gets its tools, for every face: farmhand's own `builtin`
    toolsets (the model's `rag_query`), each server opened by `opener` (pooled under
    `farmhand serve`, started for the chat in the CLI), the tools the caller runs itself
    beside them, all listed once. The servers close with `stack`."""
    log.debug("MCP servers for this chat: %d %s", len(servers), [s.name for s in servers])
    toolsets = [*builtin, *await opener.enter_all(stack, servers)]
    router = ToolRouter(toolsets, client_tools=client_tools)
    if log.isEnabledFor(logging.DEBUG):  # listed here for the log alone; the chat lists them
        names = [t.name for t in await router.list_tools()]
        log.debug("tools offered to the model: %d %s", len(names), names)
    return router


def tool_settings(config: FarmhandConfig, asked: ToolRequest | None = None) -> ToolSettings:
    """The config's `runtime:` tool settings, with what the caller asks (`asked`: a
    request's fields, `farmhand run --jit`) in their place."""
    runtime, asked = config.runtime, asked or ToolRequest()
    return ToolSettings(
        tool_timeout=asked.tool_timeout or runtime.tool_timeout,
        max_tool_result_chars=runtime.max_tool_result_chars,
        saved_results=runtime.saved_results,
        jit_tools=runtime.jit_tools if asked.jit is None else asked.jit,
        jit_max_tools=asked.jit_max_tools or runtime.jit_max_tools,
        jit_connect_eager=runtime.jit_connect_eager
        if asked.jit_connect_eager is None
        else asked.jit_connect_eager,
    )


@dataclass(frozen=True)
class ChatSetup:
    """What the config says one chat of `model` gets, the same for every face (the HTTP
    dialects, the MCP and A2A faces, the CLI, the Python API): its MCP servers (the model's
    `mcp_servers`, before the request policy sorts them), its prompts (`prompts:`), its tool
    settings and round limit (`runtime:`, with the caller's in their place), its own tools
    (inline `tools:`, then the caller's) and farmhand's (`rag_query` over its `rag:`). Built
    by `chat_setup`."""

    model: ModelConfig
    servers: list[McpServerConfig]
    system_prompt: str | None
    tools: ToolSettings
    max_tool_rounds: int
    client_tools: list[ToolDefinition]
    builtin: list[Toolset]

    def opening(self, messages: Sequence[Message]) -> Sequence[Message]:
        """`messages` with the model's prompts first: one system message, the prompts' text
        before the caller's own system message. A conversation that already starts with them
        (a history continued, a stored conversation) is returned as it is."""
        prompt = self.system_prompt
        if not prompt:
            return messages
        first = messages[0] if messages else None
        if first is None or first.role != "system":
            return [Message.system(prompt), *messages]
        if first.content.startswith(prompt):
            return messages
        return [Message.system(f"{prompt}\n\n{first.content}"), *messages[1:]]


def chat_setup(
    config: FarmhandConfig,
    model: ModelConfig,
    *,
    asked: ToolRequest,
    client_tools: Sequence[ToolDefinition] = (),
    library: Library,
) -> ChatSetup:
    """The one builder of a chat's setup from the config (see ChatSetup), read in one place;
    `asked`: what the caller asks of its tools and rounds in the config's place.
    Farmhand's own tool for the model is `rag_query` over the collections its `rag:` lists
    (none: no tool) in `library` (the service's, shared by its chats)."""
    return ChatSetup(
        model=model,
        servers=config.servers_for(model),
        system_prompt=config.system_prompt(model),
        tools=tool_settings(config, asked),
        max_tool_rounds=asked.max_tool_rounds or config.runtime.max_tool_rounds,
        client_tools=[*model.tool_definitions(), *client_tools],
        builtin=[RagToolset(library, model.rag)] if model.rag else [],
    )


@asynccontextmanager
async def open_tools(
    opener: ServerToolsets,
    servers: Sequence[McpServerConfig],
    setup: ChatSetup,
    settings: GenerationSettings,
    toolsets: Sequence[Toolset] = (),
) -> AsyncIterator[tuple[ToolRouter, GenerationSettings]]:
    """A chat's tools for as long as the block lasts (`open_router`: the model's own and
    the caller's `toolsets`, the `servers` opened by `opener`, the client's tools), and
    `settings` with its tool_choice resolved against them: RequestError (a 400: the client
    named it) for a tool that is none of them."""
    async with AsyncExitStack() as stack:
        builtin = [*setup.builtin, *toolsets]
        router = await open_router(stack, opener, servers, setup.client_tools, builtin)
        try:
            choice = await router.resolve_choice(settings.tool_choice, jit=setup.tools.jit_tools)
        except UnknownToolError as exc:
            raise RequestError(str(exc), param="tool_choice") from None
        if choice != settings.tool_choice:  # a replace() costs microseconds per request
            settings = dataclasses.replace(settings, tool_choice=choice)
        yield router, settings
