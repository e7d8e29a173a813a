"""The A2A routes of `farmhand serve`, built from the SDK's pieces:

    GET  /.well-known/agent-card.json   the card (`card.py`), made per request: skills
                                        follow the config and the stored projects
    POST /a2a                           JSON-RPC 2.0: SendMessage, SendStreamingMessage
                                        (SSE), GetTask, ListTasks, CancelTask,
                                        SubscribeToTask; push notifications answer
                                        "not supported" (-32003)

The SDK's `JsonRpcDispatcher` reads and answers JSON-RPC, its `DefaultRequestHandler`
runs tasks (one `FarmhandAgent` execution per message, cancellation, subscriptions),
over `FarmhandTaskStore`. Every request has passed the app's middleware first (Host and
Origin, API keys, body size, strict JSON); the client the gate recognised (its key's
digest, kept in the request's scope under `client_key`) owns the tasks it makes.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from a2a.auth.user import User
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.request_handlers.response_helpers import agent_card_to_dict
from a2a.server.routes import DefaultServerCallContextBuilder, create_jsonrpc_routes
from a2a.types.a2a_pb2 import AgentCard
from a2a.utils.constants import AGENT_CARD_WELL_KNOWN_PATH
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from farmhand.a2aserver.card import RPC_PATH, agent_card, handler_card
from farmhand.a2aserver.executor import FarmhandAgent
from farmhand.a2aserver.task_store import FarmhandTaskStore
from farmhand.service.state import ServiceState

PATHS = (RPC_PATH, AGENT_CARD_WELL_KNOWN_PATH)


class _Client(User):
    """The client a request came from, as the gate named it ("" without API keys)."""

    def __init__(self, name: str) -> None:
        self.name = name

    @property
    def is_authenticated(self) -> bool:
        return bool(self.name)

    @property
    def user_name(self) -> str:
        return self.name


class _ClientContext(DefaultServerCallContextBuilder):
    def __init__(self, client_key: str) -> None:
        self.client_key = client_key

    def build_user(self, request: Request) -> User:
        return _Client(str(request.scope.get(self.client_key, "")))


class A2AEndpoint:
    """The routes, and the request handler to close with the app's lifespan (`run`)."""

    def __init__(self, state: ServiceState, *, requires_keys: bool, client_key: str) -> None:
        self.state = state
        self.requires_keys = requires_keys
        # The handler checks capabilities (streaming) on its own card; the served one adds
        # the skills and the interface's address.
        self.handler = DefaultRequestHandler(
            agent_executor=FarmhandAgent(state),
            task_store=FarmhandTaskStore(state),
            agent_card=handler_card(requires_keys),
            interrupted_task_timeout=state.config.server.question_timeout,
        )
        self.routes: list[BaseRoute] = [
            *create_jsonrpc_routes(
                self.handler, RPC_PATH, context_builder=_ClientContext(client_key)
            ),
            Route(AGENT_CARD_WELL_KNOWN_PATH, self.card, methods=["GET"]),
        ]

    async def card(self, request: Request) -> Response:
        base = str(request.base_url).rstrip("/")
        served: AgentCard = await agent_card(self.state, base, self.requires_keys)
        return JSONResponse(agent_card_to_dict(served))

    @asynccontextmanager
    async def run(self) -> AsyncIterator[None]:
        """For the app's lifespan: tasks still running at shutdown are cancelled."""
        try:
            yield
        finally:
            await self.handler.aclose()
