"""An Anthropic Messages request body (`POST /v1/messages`, `/v1/messages/count_tokens`) ->
a ChatRequest, or a RequestError saying what to fix (400, `param` naming the field).

What maps where:

    system (string or text blocks), role "system" entries   system messages, in order
    user text blocks / tool_result blocks                  user messages / tool messages
    assistant text / tool_use / thinking blocks            the assistant turn, its calls,
                                                           its reasoning
    mcp_tool_use / mcp_tool_result (an earlier answer)     a call and its result, as history
    tools (input_schema; bash_*/text_editor_*), tool_choice client tools, GenerationSettings
                                                           (server tools left out:
                                                           `tools.py`)
    mcp_servers (the MCP connector)                        servers through the request policy
    max_tokens (required), stop_sequences, temperature,
    top_p, top_k                                           GenerationSettings

`metadata`, `thinking` and `cache_control` are checked and accepted, but farmhand's
backends take no setting for them (reasoning models write their thinking anyway).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from farmhand.dialects.anthropic.content import conversation, system_messages
from farmhand.dialects.anthropic.tools import read_tools
from farmhand.dialects.fields import integer, number
from farmhand.errors import ConfigError, RequestError
from farmhand.generation.settings import GenerationSettings
from farmhand.service.chat import ChatRequest
from farmhand.service.mcp_servers import parse_mcp_servers
from farmhand.tools.choice import AUTO, ToolChoice
from farmhand.tools.definition import ToolDefinition
from farmhand.tools.formats import tool_choice_from_openai
from farmhand.tools.formats.anthropic import tool_choice_from_anthropic

CONNECTOR_FIELDS = ("type", "url", "name", "authorization_token", "tool_configuration")


@dataclass(frozen=True)
class AnthropicChat:
    """The parsed request: what to run, and how to answer."""

    chat: ChatRequest
    model: str
    stream: bool
    ignored_tools: tuple[str, ...] = ()
    """Server tools the request sent that farmhand cannot run (`tools.py`)."""


def parse_messages(body: dict[str, Any], *, counting: bool = False) -> AnthropicChat:
    """`counting`: a count_tokens body, which has no max_tokens and is never streamed."""
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise RequestError(
            "`model` is required: the name of a model from GET /v1/models", param="model"
        )
    stream = False if body.get("stream") is None else body["stream"]
    if not isinstance(stream, bool):
        raise RequestError("stream must be true or false", param="stream")
    stream = stream and not counting
    read = read_tools(body.get("tools"))
    tools = read.definitions
    choice, parallel = tool_choice(body.get("tool_choice"), tools)
    settings = GenerationSettings(
        temperature=number(body, "temperature", minimum=0, maximum=1),
        max_tokens=None if counting else _max_tokens(body.get("max_tokens")),
        stop=_stop_sequences(body.get("stop_sequences")),
        tool_choice=choice,
        parallel_tool_calls=parallel,
        stream=stream,
        top_p=number(body, "top_p", minimum=0, maximum=1),
        top_k=integer(body, "top_k", minimum=0) or None,  # 0: no top-k, the sampler's own
    )
    for key in ("metadata", "thinking"):
        if body.get(key) is not None and not isinstance(body[key], dict):
            raise RequestError(f"{key} must be an object", param=key)
    messages = [*system_messages(body.get("system")), *conversation(body.get("messages"))]
    chat = ChatRequest(
        model=model,
        messages=messages,
        settings=settings,
        client_tools=tools,
        mcp_servers=parse_mcp_servers(connector_servers(body.get("mcp_servers"))),
        allowed_tools=connector_allowed_tools(body.get("mcp_servers")),
    )
    return AnthropicChat(chat=chat, model=model, stream=stream, ignored_tools=tuple(read.ignored))


def tool_choice(value: object, tools: list[ToolDefinition]) -> tuple[ToolChoice, bool]:
    """Anthropic's tool_choice as farmhand's, and whether parallel calls are allowed
    (`disable_parallel_tool_use`)."""
    if value is None:
        return AUTO, True
    if not isinstance(value, dict):
        raise RequestError(
            'tool_choice must be an object: {"type": "auto" | "any" | "none"} or'
            ' {"type": "tool", "name": "..."}',
            param="tool_choice",
        )
    try:
        choice = tool_choice_from_openai(tool_choice_from_anthropic(value))
    except ConfigError as exc:
        raise RequestError(str(exc), param="tool_choice") from None
    if value["type"] in ("any", "tool") and not tools:
        raise RequestError(
            f'tool_choice {{"type": "{value["type"]}"}} needs `tools`; add the tools the model'
            " must choose from",
            param="tool_choice",
        )
    disable = value.get("disable_parallel_tool_use", False)
    if not isinstance(disable, bool):
        raise RequestError(
            "tool_choice.disable_parallel_tool_use must be true or false", param="tool_choice"
        )
    return choice, not disable


def connector_servers(value: object) -> list[dict[str, Any]]:
    """The MCP connector's servers, `{"type": "url", "url", "name", "authorization_token"?,
    "tool_configuration"?: {"enabled"?, "allowed_tools"?}}`, as farmhand's request server
    objects (`service.mcp_servers`; the request policy checks the URL's host before anything
    is reached). Disabled servers are left out."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise RequestError("mcp_servers must be a list of server objects", param="mcp_servers")
    servers: list[dict[str, Any]] = []
    for i, item in enumerate(value):
        where = f"mcp_servers[{i}]"
        if not isinstance(item, dict) or item.get("type", "url") != "url":
            raise RequestError(
                f'{where} must be {{"type": "url", "url": "https://...", "name": "..."}}',
                param="mcp_servers",
            )
        unknown = sorted(set(item) - set(CONNECTOR_FIELDS))
        if unknown:
            raise RequestError(
                f"{where} has unknown field(s) {', '.join(unknown)};"
                f" accepted: {', '.join(CONNECTOR_FIELDS)}",
                param="mcp_servers",
            )
        if not _enabled(item.get("tool_configuration"), where):
            continue
        server: dict[str, Any] = {"name": item.get("name"), "url": item.get("url")}
        server["transport"] = "http"
        token = item.get("authorization_token")
        if token is not None:
            if not isinstance(token, str) or not token:
                raise RequestError(
                    f"{where}.authorization_token must be a non-empty string",
                    param="mcp_servers",
                )
            server["headers"] = {"Authorization": f"Bearer {token}"}
        servers.append(server)
    return servers


def _enabled(config: object, where: str) -> bool:
    if config is None:
        return True
    if not isinstance(config, dict):
        raise RequestError(f"{where}.tool_configuration must be an object", param="mcp_servers")
    enabled = config.get("enabled", True)
    if not isinstance(enabled, bool):
        raise RequestError(
            f"{where}.tool_configuration.enabled must be true or false", param="mcp_servers"
        )
    return enabled


def connector_allowed_tools(value: object) -> dict[str, frozenset[str]]:
    """Server name -> its `tool_configuration.allowed_tools` (servers checked already by
    `connector_servers`): the only tools of that server the model is offered."""
    allowed: dict[str, frozenset[str]] = {}
    for i, item in enumerate(value if isinstance(value, list) else []):
        config = item.get("tool_configuration") if isinstance(item, dict) else None
        names = config.get("allowed_tools") if isinstance(config, dict) else None
        if names is None:
            continue
        if not isinstance(names, list) or not all(isinstance(n, str) and n for n in names):
            raise RequestError(
                f"mcp_servers[{i}].tool_configuration.allowed_tools must be a list of tool names",
                param="mcp_servers",
            )
        allowed[str(item.get("name"))] = frozenset(names)
    return allowed


def _max_tokens(value: object) -> int:
    if value is None:
        raise RequestError(
            "max_tokens is required: the most tokens the model may write in its reply"
            " (for example 1024)",
            param="max_tokens",
        )
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise RequestError("max_tokens must be an integer of at least 1", param="max_tokens")
    return value


def _stop_sequences(value: object) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, list) and all(isinstance(v, str) and v for v in value):
        return tuple(value)
    raise RequestError("stop_sequences must be a list of non-empty strings", param="stop_sequences")
