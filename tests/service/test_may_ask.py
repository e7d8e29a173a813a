"""`may_ask`: only a chat with MCP servers can pause on a question, so only such a chat
needs the runner that parks it (the Responses API runs the others in the request's task)."""

from __future__ import annotations

from pathlib import Path

from tests.support.live import pantry_server, scripted_config

from farmhand.config.models import McpServerConfig
from farmhand.messages import Message
from farmhand.service.chat import ChatRequest
from farmhand.service.mcp_chat import may_ask
from farmhand.service.mcp_tools import McpTool
from farmhand.service.state import ServiceState
from farmhand.toolsets.mcp.policy import ServerRequest
from farmhand.toolsets.mcp.pool import MCPPool

ASK = ChatRequest(messages=[Message.user("Hi")], model="farm")


def state_with(tmp_path: Path, *servers: McpServerConfig) -> ServiceState:
    return ServiceState(config=scripted_config(*servers), home=tmp_path, pool=MCPPool())


def test_a_chat_without_servers_cannot_ask(tmp_path: Path) -> None:
    assert not may_ask(state_with(tmp_path), ASK)


def test_servers_from_the_config_the_request_or_its_tools_can_ask(tmp_path: Path) -> None:
    assert may_ask(state_with(tmp_path, pantry_server()), ASK)
    plain = state_with(tmp_path)
    request_server: ServerRequest = "pantry"  # a server the operator defined, by name
    assert may_ask(
        plain, ChatRequest(messages=ASK.messages, model="farm", mcp_servers=[request_server])
    )
    assert may_ask(plain, ChatRequest(messages=ASK.messages, model="farm", tools_path=tmp_path))
    assert may_ask(plain, ASK, [McpTool("pantry", request_server)])
