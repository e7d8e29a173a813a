"""A stdio MCP server for the Ollama API tests: file-like tools with nothing behind them."""

from mcp.server.mcpserver import MCPServer

server = MCPServer("files")


@server.tool()
def create_directory(path: str) -> str:
    """Create a new directory."""
    return f"created {path}"


@server.tool()
def list_directory(path: str) -> str:
    """List the entries of a directory."""
    return f"[FILE] {path}/notes.txt\n[DIR] {path}/docs"


@server.tool()
def read_file(path: str) -> str:
    """Read the contents of a file."""
    return f"contents of {path}"


if __name__ == "__main__":
    server.run("stdio")
