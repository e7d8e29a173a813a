"""A small stdio MCP server for tests: reports its pid, echoes, and can crash on start."""

import os
import sys

from mcp.server.mcpserver import MCPServer

if "--crash-on-start" in sys.argv:
    print("pantry: cannot open pantry.db: permission denied", file=sys.stderr)
    sys.exit(3)

server = MCPServer("pantry")


@server.tool()
def pid() -> str:
    """The server's process id."""
    return str(os.getpid())


@server.tool()
def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


@server.tool()
def env(name: str) -> str:
    """The value of an environment variable in the server, or '<unset>'."""
    return os.environ.get(name, "<unset>")


if __name__ == "__main__":
    server.run("stdio")
