"""farmhand's MCP client as the conformance suite's client under test.

`conformance client --command "python tests/conformance/farmhand_client.py"` starts this
once per scenario with the scenario's server URL as the last argument, the scenario's name
in MCP_CONFORMANCE_SCENARIO, the protocol revision asked for in
MCP_CONFORMANCE_PROTOCOL_VERSION (through 2025-11-25: the handshake, farmhand's "legacy"
mode; 2026-07-28: farmhand's "auto", which speaks it) and, for some auth scenarios,
credentials in MCP_CONFORMANCE_CONTEXT. It does what a farmhand chat does with a server:
connect through farmhand's own toolset (the code `farmhand chat`, `run` and `serve` use),
list the tools and call each one. Questions the server asks go to farmhand's terminal
asker, whose user presses Enter at every field: the form's defaults, accepted.

The auth/* scenarios run as a server with `auth: oauth`: farmhand's OAuth (the SDK's
client with farmhand's token file) and its loopback login, with a browser whose user
allows at once (it opens the authorization URL and follows the redirect back), for the
whole session, so a call that needs a wider scope logs in again on the spot.
"""

from __future__ import annotations

import io
import json
import os
import sys
import tempfile
from typing import Any

import anyio
import httpx
from rich.console import Console

from farmhand.cli.asking import TerminalAsker
from farmhand.config.models import McpServerConfig
from farmhand.toolsets.mcp.client import MCPToolset
from farmhand.toolsets.mcp.oauth_client import Browser, oauth_for
from farmhand.toolsets.mcp.oauth_login import loopback
from farmhand.toolsets.mcp.transports import server_target

# The arguments a scenario's tools need (the others take none). SEP-2243's tools mirror the
# annotated ones into Mcp-Param-* headers, so their values exercise every encoding.
ARGUMENTS: dict[str, dict[str, Any]] = {
    "add_numbers": {"a": 5, "b": 3},
    "test_custom_headers": {
        "region": "us-west1",
        "priority": 5,
        "verbose": True,
        "debug": False,
        "empty_val": "",
        "method_val": "GET",
        "float_val": 1.5,
        "non_ascii_val": "Zürich 東京",
        "whitespace_val": "  padded  ",
        "leading_space_val": " leading",
        "trailing_space_val": "trailing ",
        "internal_space_val": "a b c",
        "control_char_val": "bell\x07",
        "crlf_val": "one\r\ntwo",
        "tab_val": "\tindented",
        "query": "weather",
    },
    "test_custom_headers_null": {"region": "eu", "priority": 1, "verbose": None, "query": "q"},
}
ECHO_TOOL, ECHOED_TOOL = "json_schema_echo", "json_schema_2020_12_tool"
# The suite's own client metadata document (SEP-991), used where the server supports it.
CLIENT_METADATA_URL = "https://conformance-test.local/client-metadata.json"


async def allow(url: str) -> None:
    """The browser of a user who allows: open the URL, follow the redirect back."""
    async with httpx.AsyncClient(timeout=20) as http:
        answer = await http.get(url)
        location = answer.headers.get("location")
        if location is None:
            raise RuntimeError(f"the authorization page answered {answer.status_code}")
        await http.get(location)


async def use(toolset: MCPToolset) -> None:
    async with toolset:
        tools = await toolset.list_tools()
        # The schema-preservation scenario asks for a tool's schema back, as farmhand holds it.
        schemas = {t.name: t.parameters for t in tools}
        for tool in tools:
            arguments = ARGUMENTS.get(tool.name, {})
            if tool.name == ECHO_TOOL and ECHOED_TOOL in schemas:
                arguments = {"schema": schemas[ECHOED_TOOL]}
            output = await toolset.call_tool(tool.name, arguments)
            print(f"{tool.name}: {'error: ' if output.is_error else ''}{output.text}")


async def main(url: str) -> int:
    version = os.environ.get("MCP_CONFORMANCE_PROTOCOL_VERSION", "")
    mode = "legacy" if version and version <= "2025-11-25" else "auto"
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    asker = TerminalAsker(Console(file=sys.stderr), read_line=lambda: "\n", interactive=True)
    if not scenario.startswith("auth/"):
        server = McpServerConfig(name="conformance", transport="http", base_url=url)
        target = server_target(server)
        await use(MCPToolset(server.name, target, asker=asker, call_timeout=20, mode=mode))
        return 0
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    settings: dict[str, Any] = {"client_id": context.get("client_id") or CLIENT_METADATA_URL}
    if context.get("client_secret"):
        settings["client_secret"] = context["client_secret"]
    server = McpServerConfig(
        name="conformance", transport="http", base_url=url, auth="oauth", **settings
    )
    async with loopback(server) as callback:

        async def show(url: str) -> None:
            callback.expect(url)
            await allow(url)

        oauth = oauth_for(server, Browser(callback.redirect_uri, show, callback.result))
        target = server_target(server, auth=oauth)
        await use(MCPToolset(server.name, target, asker=asker, call_timeout=20, mode=mode))
    return 0


if __name__ == "__main__":
    sys.stdout = io.TextIOWrapper(sys.stdout.buffer, encoding="utf-8", line_buffering=True)
    with tempfile.TemporaryDirectory() as home:
        os.environ["FARMHAND_HOME"] = home  # the tokens of this run only
        sys.exit(anyio.run(main, sys.argv[-1]))
