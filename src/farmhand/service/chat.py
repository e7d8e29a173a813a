"""One chat, whatever face or dialect asked for it: the model, the tools, the loop.

The dialects (`farmhand.dialects`) translate a request into a ChatRequest and the loop's
events back into their own response shape; everything in between is here, in one line:
the chat's plan, read from the config and the state in one place (`plan_chat`: the model,
its setup from the config, its servers through the request policy), the provider, its
tools opened for the chat (`runtime.session.open_tools`), the loop.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncGenerator, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, aclosing
from dataclasses import dataclass, field
from pathlib import Path

import anyio

from farmhand.config.models import McpServerConfig, ModelConfig
from farmhand.errors import DeploymentsDownError, LoopError, ProviderError
from farmhand.messages import Message
from farmhand.providers.base import GenerationSettings
from farmhand.runtime.events import LoopEvent, LoopFinished, ReasoningChunk
from farmhand.runtime.executor import ToolRouter
from farmhand.runtime.loop import run_loop
from farmhand.runtime.session import (
    ChatSetup,
    ServerToolsets,
    ToolRequest,
    ToolSettings,
    chat_setup,
    open_tools,
)
from farmhand.service.state import ServiceState
from farmhand.tools.definition import ToolDefinition
from farmhand.toolsets.base import Toolset
from farmhand.toolsets.mcp.elicitation import Asker as Asker  # the faces' name for it
from farmhand.toolsets.mcp.elicitation import Refusal
from farmhand.toolsets.mcp.policy import ChatServers, ServerRequest

log = logging.getLogger(__name__)


@dataclass
class ChatRequest:
    """A chat in farmhand's terms. `client_tools` are the request's own tools (returned to
    the caller when called); `mcp_servers` and `tools_path` are what the request brings,
    held to the operator's request policy (`toolsets.mcp.policy`) before anything starts."""

    model: str | ModelConfig | None
    messages: Sequence[Message]
    settings: GenerationSettings = field(default_factory=GenerationSettings)
    client_tools: Sequence[ToolDefinition] = ()
    mcp_servers: Sequence[ServerRequest] = ()
    tools_path: Path | None = None
    max_tool_rounds: int | None = None
    tool_timeout: float | None = None
    jit_tools: bool | None = None
    jit_max_tools: int | None = None
    jit_connect_eager: bool | None = None
    allowed_tools: Mapping[str, frozenset[str]] = field(default_factory=dict)
    """Server name -> the only tools of that server the model is offered (the MCP
    connector's and the Responses `mcp` tool's `allowed_tools`)."""
    asker: Asker | None = None
    """Who answers the servers' questions and approvals during this chat: set by the
    Responses API, which pauses the chat and hands the question to its client
    (`service.parked`). None: no one can, and every question is refused, saying so."""
    own_servers: Sequence[McpServerConfig] = ()
    folder_servers: Sequence[McpServerConfig] = ()
    """Servers a local face adds for its user (the Python API's `tools=[PATH]`, as
    `farmhand run --tools PATH` finds them): trusted like the operator's, never from a
    request; the folder servers read paths as the working directory's, and only read."""
    toolsets: Sequence[Toolset] = ()
    """Toolsets the caller opened for this chat, offered beside its servers': the Python
    API's functions, the Responses API's `mcp` tools (`service.mcp_chat`)."""
    answer_when_spent: bool = False
    """Once the rounds are spent, the model answers without tools (`run_loop`'s
    `answer_when_spent`): the Responses API's `mcp` tools ask for it (`service.mcp_chat`)."""


CANNOT_ASK = Refusal(
    "this API dialect cannot hand a question back to its client; the Responses API"
    " (POST /v1/responses) can"
)


def admit_servers(
    state: ServiceState,
    configured: Sequence[McpServerConfig],
    requested: Sequence[ServerRequest] = (),
    tools_path: Path | None = None,
    *,
    own: Sequence[McpServerConfig] = (),
    own_folders: Sequence[McpServerConfig] = (),
) -> ChatServers:
    """Every server a chat or a tool search will use, through the one request policy
    (`RequestPolicy.admit_chat`, with this service's rules and servers): nothing is started,
    read or reached before this returns."""
    return state.policy.admit_chat(
        configured,
        requested,
        known=state.known_servers,  # the definitions file, read only when a request names one
        tools_path=tools_path,
        configured_outside=state.outside_config,  # a project written through the API
        own=own,
        own_folders=own_folders,
    )


def server_toolsets(
    state: ServiceState,
    servers: ChatServers,
    settings: ToolSettings,
    allowed_tools: Mapping[str, frozenset[str]] | None = None,
    asker: Asker | None = None,
) -> ServerToolsets:
    """Opens a chat's servers from the pool, with the wrappers their origin calls for;
    `asker` None refuses every question (`CANNOT_ASK`)."""
    return ServerToolsets(
        settings,
        folder_servers=frozenset(s.name for s in servers.folder),
        pool=state.pool,
        outside=frozenset(s.name for s in servers.outside),
        read_only_outside=not state.policy.allow_writes,
        allowed_tools=allowed_tools or {},
        asker=asker or CANNOT_ASK,
    )


@dataclass(frozen=True)
class ChatPlan:
    """One chat, decided and admitted before anything starts: its model, what the config
    gives it (`chat_setup`, the builder every face shares), its servers as the request
    policy admitted them, and how they open (`server_toolsets`)."""

    model: ModelConfig
    setup: ChatSetup
    servers: ChatServers
    opener: ServerToolsets


def plan_chat(state: ServiceState, request: ChatRequest) -> ChatPlan:
    """The plan for `request`, read from the config and the state in one place: the model,
    its setup from the config with the request's own values in their place, and its
    servers through the request policy. FarmhandError for an unknown model or a refused
    server."""
    model = state.model_config(request.model)
    setup = chat_setup(
        state.config,
        model,
        asked=ToolRequest(
            jit=request.jit_tools,
            tool_timeout=request.tool_timeout,
            jit_max_tools=request.jit_max_tools,
            jit_connect_eager=request.jit_connect_eager,
            max_tool_rounds=request.max_tool_rounds,
        ),
        client_tools=request.client_tools,
        library=state.library,
    )
    servers = admit_servers(
        state,
        setup.servers,
        request.mcp_servers,
        request.tools_path,
        own=request.own_servers,
        own_folders=request.folder_servers,
    )
    opener = server_toolsets(state, servers, setup.tools, request.allowed_tools, request.asker)
    return ChatPlan(model, setup, servers, opener)


async def run_chat(state: ServiceState, request: ChatRequest) -> AsyncGenerator[LoopEvent, None]:
    """The loop's events for one request; the last is LoopFinished. Raises FarmhandError
    subclasses for what the caller got wrong (unknown model, refused server, ...)."""
    plan = plan_chat(state, request)
    provider = await state.provider(plan.model)
    try:
        async with _open_tools(plan, request) as (router, settings):
            loop = run_loop(
                provider,
                plan.setup.opening(request.messages),
                router,
                settings,
                max_tool_rounds=plan.setup.max_tool_rounds,
                answer_when_spent=request.answer_when_spent,
                watch=state.observer.chat(plan.model.name, plan.model.provider),
            )
            async with aclosing(loop) as events:
                async for event in events:
                    yield event
    except ProviderError as exc:
        if not state.outside_config:
            raise
        # A backend a client's project chose: what it wrote (a page of an internal host, a
        # redirect's target) stays in the operator's log; the client gets a fixed reason.
        log.warning("model %r of a project written through the API: %s", plan.model.name, exc)
        if isinstance(exc, DeploymentsDownError):  # a 503 with Retry-After, as for any model
            raise DeploymentsDownError(exc.brief, retry_after=exc.retry_after) from None
        raise ProviderError(exc.brief, brief=exc.brief) from None


async def chat_tools(state: ServiceState, request: ChatRequest) -> list[ToolDefinition]:
    """The tools a chat of `request` is offered now, asked afresh (`farmhand run`'s /tools)."""
    async with _open_tools(plan_chat(state, request), request) as (router, _):
        return await router.list_tools(refresh=True)


def _open_tools(
    plan: ChatPlan, request: ChatRequest
) -> AbstractAsyncContextManager[tuple[ToolRouter, GenerationSettings]]:
    """The plan's tools, every server a pooled session (configured ones stay connected
    across requests, those from outside are bounded by the pool), and the request's
    settings with its tool_choice resolved against them."""
    return open_tools(plan.opener, plan.servers.all, plan.setup, request.settings, request.toolsets)


async def start_chat(state: ServiceState, request: ChatRequest) -> None:
    """Loads the model of `request` while its servers start in the pool, where the chat
    finds both: a local face's first chat, whose two slowest steps need nothing from each
    other. A server that fails to start is reported by the chat that uses it."""
    plan = plan_chat(state, request)
    tools = plan.setup.tools
    lazy = tools.jit_tools and not tools.jit_connect_eager  # JIT starts them when found
    from_request = {s.name for s in [*plan.servers.outside, *plan.servers.folder]}

    async def start(server: McpServerConfig) -> None:
        with contextlib.suppress(Exception):  # the chat that needs it says what failed
            connection = state.pool.connection(server, from_request=server.name in from_request)
            async with connection.session():
                pass

    failure: Exception | None = None
    async with anyio.create_task_group() as group:
        for server in [] if lazy else plan.servers.all:
            group.start_soon(start, server)
        try:
            await state.provider(plan.model)
        except Exception as exc:  # raised as it is, not in an exception group
            failure = exc
            group.cancel_scope.cancel()
    if failure is not None:
        raise failure


@dataclass(frozen=True)
class ChatOutcome:
    """A chat run to its end: the loop's last event and the reasoning the model wrote."""

    finished: LoopFinished
    reasoning: str


async def complete_chat(state: ServiceState, request: ChatRequest) -> ChatOutcome:
    """`run_chat` to the end, for faces that answer once (non-streaming HTTP, MCP tools).

    Read to its end, not left at LoopFinished (the last event): a generator left open is
    closed by asyncio with a task of its own, a third of this function's cost."""
    reasoning: list[str] = []
    finished: LoopFinished | None = None
    async with aclosing(run_chat(state, request)) as events:
        async for event in events:
            if isinstance(event, ReasoningChunk):
                reasoning.append(event.text)
            elif isinstance(event, LoopFinished):
                finished = event
    if finished is None:
        raise LoopError("the tool loop ended without an answer")
    return ChatOutcome(finished, "".join(reasoning))
