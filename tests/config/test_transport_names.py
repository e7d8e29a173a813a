"""One spelling table for MCP transports: the config, a request's servers and the server
definitions file all read Ollama's `streamable-http` as http, and refuse the same way."""

from __future__ import annotations

import pytest

from farmhand.config.loader import parse_config
from farmhand.errors import ConfigError, RequestError
from farmhand.service.mcp_servers import parse_mcp_servers
from farmhand.toolsets.mcp.definitions import ServerDefinition

CONFIG = """
mcp:
  servers:
    - name: remote
      transport: {transport}
      base_url: http://127.0.0.1:9000/mcp
"""


def test_streamable_http_is_http_everywhere() -> None:
    config = parse_config(CONFIG.format(transport="streamable-http"), "farmhand.yaml")
    assert config.mcp.servers[0].transport == "http"
    asked = {"name": "remote", "transport": "streamable-http", "url": "http://127.0.0.1:9/mcp"}
    (server,) = parse_mcp_servers([asked])
    assert not isinstance(server, str) and server.transport == "http"
    known = ServerDefinition.model_validate(
        {"name": "remote", "transport": "streamable-http", "url": "http://127.0.0.1:9/mcp"}
    )
    assert known.transport == "http"


def test_an_unknown_transport_is_refused_with_the_choices() -> None:
    with pytest.raises(ConfigError, match="transport"):
        parse_config(CONFIG.format(transport="websocket"), "farmhand.yaml")
    asked = {"name": "remote", "transport": "websocket", "url": "http://127.0.0.1:9/mcp"}
    with pytest.raises(RequestError, match="use one of stdio, http, sse, streamable-http"):
        parse_mcp_servers([asked])
