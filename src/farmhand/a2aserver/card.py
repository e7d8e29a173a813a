"""farmhand's agent card (A2A 1.0): who it is, where its JSON-RPC interface is, what it
can do and how a client authenticates.

Skills are what a message can ask for: one per configured model, with the tools its chats
can call (the operator's MCP servers, listed through the pool like `/api/tools`, and the
model's inline tools), and one per stored project (its models and MCP servers by name:
a project's servers are not started to describe it). A message picks one with its
metadata: `{"model": NAME}` or `{"project": "NAMESPACE/NAME"}`; without either it goes to
the default model.

When the server requires API keys the card says so (`securitySchemes`: a bearer token,
or the same key as `x-api-key`); the card itself is behind the same keys, since it names
the tools and projects.
"""

from __future__ import annotations

import logging

from a2a.types.a2a_pb2 import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
    APIKeySecurityScheme,
    HTTPAuthSecurityScheme,
    SecurityRequirement,
    SecurityScheme,
    StringList,
)
from a2a.utils.constants import PROTOCOL_VERSION_1_0, TransportProtocol

from farmhand.errors import FarmhandError
from farmhand.service.projects import store_for
from farmhand.service.state import ServiceState
from farmhand.service.tool_search import search_tools
from farmhand.version import farmhand_version

log = logging.getLogger(__name__)

RPC_PATH = "/a2a"
MAX_TAGS = 64
"""Tools named per skill: a card stays readable with hundreds of tools behind a model."""
TEXT_MODES = ["text/plain", "application/json"]
DESCRIPTION = (
    "farmhand: a local tool-calling runtime. Each message is a chat with one of its models,"
    " which may call the tools of its MCP servers before it answers; choose the model or"
    ' project with the message metadata {"model": ...} or {"project": "namespace/name"}.'
)


async def agent_card(state: ServiceState, base_url: str, requires_keys: bool) -> AgentCard:
    """The card as served at `base_url` (scheme://host of the request, already checked
    against the operator's allowed hosts), with the skills of the config and projects."""
    card = base_card(base_url, requires_keys)
    card.skills.extend([*await model_skills(state), *project_skills(state)])
    return card


def base_card(base_url: str, requires_keys: bool) -> AgentCard:
    """The card without skills: name, interface, capabilities, security."""
    card = AgentCard(
        name="farmhand",
        description=DESCRIPTION,
        version=farmhand_version(),
        supported_interfaces=[
            AgentInterface(
                url=base_url + RPC_PATH,
                protocol_binding=TransportProtocol.JSONRPC.value,
                protocol_version=PROTOCOL_VERSION_1_0,
            )
        ],
        capabilities=AgentCapabilities(streaming=True, push_notifications=False),
        default_input_modes=TEXT_MODES,
        default_output_modes=["text/plain"],
    )
    if requires_keys:
        card.security_schemes["bearer"].CopyFrom(
            SecurityScheme(
                http_auth_security_scheme=HTTPAuthSecurityScheme(
                    scheme="Bearer", description="one of the server's API keys"
                )
            )
        )
        card.security_schemes["apiKey"].CopyFrom(
            SecurityScheme(
                api_key_security_scheme=APIKeySecurityScheme(
                    location="header", name="x-api-key", description="the same key, as a header"
                )
            )
        )
        for scheme in ("bearer", "apiKey"):  # either one
            card.security_requirements.append(SecurityRequirement(schemes={scheme: StringList()}))
    return card


def handler_card(requires_keys: bool) -> AgentCard:
    """The card the SDK's request handler checks capabilities on (clients get the one
    with every model and project): complete, with one general skill."""
    card = base_card("http://127.0.0.1", requires_keys)
    card.skills.append(
        AgentSkill(
            id="chat",
            name="chat",
            description="A chat with one of farmhand's models and its tools.",
            tags=["chat"],
        )
    )
    return card


async def model_skills(state: ServiceState) -> list[AgentSkill]:
    skills = []
    default = state.model_config(None).name
    for name in state.model_names():
        model = state.model_config(name)
        tools = [t.name for t in model.tool_definitions()]
        note = ""
        try:
            found = await search_tools(state, model=name)
            tools += [t.name for t in found.tools]
            note = f" (not listed: {found.problems})" if found.problems else ""
        except FarmhandError as exc:  # a server that will not start: say so, list the rest
            log.warning("agent card: tools of model %r: %s", name, exc)
            note = " (its MCP servers could not be listed; see the server log)"
        backend = f"{model.provider} {model.model or model.model_path or ''}".strip()
        called = f"{len(tools)} tools: {', '.join(tools[:MAX_TAGS])}" if tools else "no tools"
        default_note = ", the default" if name == default else ""
        about = f"A chat with {name} ({backend}{default_note}), which can call {called}{note}."
        skills.append(_skill("model", name, about, tools))
    return skills


def project_skills(state: ServiceState) -> list[AgentSkill]:
    store = store_for(state)
    skills = []
    for namespace in store.namespaces():
        for project in store.list(namespace):
            where = f"{namespace}/{project.name}"
            config = project.config
            models = [m.name for m in config.runtime.models] or ["default"]
            servers = [s.name for s in config.mcp.servers]
            on = f" and the MCP servers {', '.join(servers)}" if servers else ""
            about = f"A chat on the project {where}: its models {', '.join(models)}{on}."
            skills.append(_skill("project", where, about, [*models, *servers]))
    return skills


def _skill(kind: str, name: str, description: str, tags: list[str]) -> AgentSkill:
    """A skill a message picks with `{kind: name}` in its metadata."""
    return AgentSkill(
        id=f"{kind}:{name}",
        name=name,
        description=description,
        tags=[kind, *tags[:MAX_TAGS]],
        examples=[f'metadata {{"{kind}": "{name}"}}'],
    )
