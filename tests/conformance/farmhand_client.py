"""farmhand's MCP client as the conformance suite's client under test.

`conformance client --command "python tests/conformance/farmhand_client.py"` starts this
once per scenario with the scenario's server URL as the last argument (and the scenario's
name in MCP_CONFORMANCE_SCENARIO). It does what a farmhand chat does with a server: connect
through farmhand's own toolset (the code `farmhand chat`, `run` and `serve` use), list the
tools and call each one. Questions the server asks go to farmhand's terminal asker, whose
user presses Enter at every field: the form's defaults, accepted.
"""

from __future__ import annotations

import io
import sys
from typing import Any

import anyio
from rich.console import Console

from farmhand.cli.asking import TerminalAsker
from farmhand.config.models import McpServerConfig
from farmhand.toolsets.mcp.client import MCPToolset

# The arguments a scenario's tools need (the others take none).
ARGUMENTS: dict[str, dict[str, Any]] = {"add_numbers": {"a": 5, "b": 3}}


async def main(url: str) -> int:
    server = McpServerConfig(name="conformance", transport="http", base_url=url)
    asker = TerminalAsker(Console(file=sys.stderr), read_line=lambda: "\n", interactive=True)
    async with MCPToolset.from_config(server, asker=asker, call_timeout=20) as toolset:
        for tool in await toolset.list_tools():
            output = await toolset.call_tool(tool.name, ARGUMENTS.get(tool.name, {}))
            print(f"{tool.name}: {'error: ' if output.is_error else ''}{output.text}")
    return 0


if __name__ == "__main__":
    sys.stdout = io.TextIOWrapper(sys.stdout.buffer, encoding="utf-8", line_buffering=True)
    sys.exit(anyio.run(main, sys.argv[-1]))
