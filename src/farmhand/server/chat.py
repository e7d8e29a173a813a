"""One chat request, whatever its dialect: the model, the tools, the loop.

The dialect modules (openai_api, ollama_api) translate their request into a ChatRequest and
the loop's events back into their own response shape; everything in between is here.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path

from farmhand.config.models import McpServerConfig
from farmhand.errors import ConfigError
from farmhand.messages import Message
from farmhand.providers.base import GenerationSettings
from farmhand.runtime.events import LoopEvent
from farmhand.runtime.executor import ToolRouter
from farmhand.runtime.loop import run_loop
from farmhand.runtime.session import ServerToolsets, ToolSettings
from farmhand.server.errors import RequestError
from farmhand.server.state import ServerState
from farmhand.tools.definition import ToolDefinition
from farmhand.tools.formats import forced_tool_name
from farmhand.toolsets.base import Toolset
from farmhand.toolsets.mcp.known_servers import filesystem_server
from farmhand.toolsets.mcp.security import validate_command
from farmhand.toolsets.wrappers import PrefixedToolset


@dataclass
class ChatRequest:
    """A chat in farmhand's terms. `client_tools` are the request's own tools (returned to
    the caller when called); `mcp_servers` are servers the request brings (checked by the
    MCP layer's rules for servers started from requests)."""

    model: str | None
    messages: Sequence[Message]
    settings: GenerationSettings = field(default_factory=GenerationSettings)
    client_tools: Sequence[ToolDefinition] = ()
    mcp_servers: Sequence[McpServerConfig] = ()
    tools_path: Path | None = None
    max_tool_rounds: int | None = None
    tool_timeout: float | None = None
    jit_tools: bool | None = None
    jit_max_tools: int | None = None
    jit_connect_eager: bool | None = None


async def run_chat(state: ServerState, request: ChatRequest) -> AsyncGenerator[LoopEvent, None]:
    """The loop's events for one request; the last is LoopFinished. Raises FarmhandError
    subclasses for what the caller got wrong (unknown model, refused server, ...)."""
    model = state.model_config(request.model)
    _check_request_servers(request)
    provider = await state.provider(model)
    runtime = state.config.runtime
    rounds = request.max_tool_rounds or runtime.max_tool_rounds
    async with _router(state, request) as router:
        async for event in run_loop(
            provider, request.messages, router, request.settings, max_tool_rounds=rounds
        ):
            yield event


@asynccontextmanager
async def _router(state: ServerState, request: ChatRequest) -> AsyncIterator[ToolRouter]:
    runtime = state.config.runtime
    model = state.model_config(request.model)
    settings = ToolSettings(
        tool_timeout=request.tool_timeout or runtime.tool_timeout,
        max_tool_result_chars=runtime.max_tool_result_chars,
        jit_tools=runtime.jit_tools if request.jit_tools is None else request.jit_tools,
        jit_max_tools=request.jit_max_tools or runtime.jit_max_tools,
        jit_connect_eager=bool(request.jit_connect_eager),
    )
    folder = [filesystem_server(request.tools_path)] if request.tools_path else []
    opener = ServerToolsets(settings, frozenset(s.name for s in folder))
    configured = list(state.config.servers_for(model))
    async with AsyncExitStack() as stack:
        toolsets: list[Toolset] = []
        if settings.jit_tools:
            toolsets = await opener.enter_all(stack, [*configured, *request.mcp_servers, *folder])
        else:
            # Configured servers stay connected in the pool across requests; a request's own
            # servers go through the pool too, under the rules for servers from requests.
            for server in configured:
                pooled = state.pool.toolset(server, call_timeout=settings.tool_timeout)
                toolsets.append(PrefixedToolset(opener.wrap(server.name, pooled), server.name))
            for server in [*request.mcp_servers, *folder]:
                pooled = state.pool.toolset(
                    server,
                    call_timeout=settings.tool_timeout,
                    from_request=server not in folder,
                )
                toolsets.append(PrefixedToolset(opener.wrap(server.name, pooled), server.name))
        router = ToolRouter(
            toolsets, client_tools=[*model.tool_definitions(), *request.client_tools]
        )
        offered = await router.list_tools()
        _check_tool_choice(request, offered, settings.jit_tools)
        yield router


def _check_request_servers(request: ChatRequest) -> None:
    """A request's own servers are held to the rules for servers from requests, whatever
    path they take (the pool, or JIT discovery); a request cannot opt out of them."""
    for server in request.mcp_servers:
        if server.allow_unsafe_command:
            raise ConfigError(
                f"MCP server {server.name!r}: allow_unsafe_command can only be set in the"
                " config file, not in a request"
            )
        validate_command(server, from_request=True)


def _check_tool_choice(request: ChatRequest, offered: Sequence[ToolDefinition], jit: bool) -> None:
    """A tool_choice naming a tool that is not offered is the client's mistake."""
    name = forced_tool_name(request.settings.tool_choice)
    if name is None or jit:  # with JIT discovery, tools appear later
        return
    names = [t.name for t in offered]
    if name not in names:
        raise RequestError(
            f"tool_choice names tool {name!r}, which is not offered;"
            f" offered tools: {', '.join(names) or 'none'}",
            param="tool_choice",
        )
