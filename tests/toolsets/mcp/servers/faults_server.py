"""A stdio (or streamable HTTP) MCP server for fault tests: crashes, hangs, huge output,
children, and a tool list that changes."""

import os
import subprocess
import sys

import anyio
from mcp.server.caching import CacheHint
from mcp.server.mcpserver import Context, MCPServer
from mcp.types import ToolAnnotations

# Its tool list may be kept an hour (2026-07-28's ttlMs): what changes it is the change event.
server = MCPServer("faults", cache_hints={"tools/list": CacheHint(ttl_ms=3_600_000)})
READ_ONLY = ToolAnnotations(read_only_hint=True)


@server.tool(annotations=READ_ONLY)
def pid() -> str:
    """The server's process id."""
    return str(os.getpid())


@server.tool(annotations=READ_ONLY)
def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


@server.tool()
def crash() -> str:
    """Exit at once, in the middle of the call."""
    os._exit(7)


@server.tool(annotations=READ_ONLY)
def crash_once(marker: str) -> str:
    """Exit the first time (when `marker` does not exist yet), answer after that."""
    if not os.path.exists(marker):
        open(marker, "w").close()
        os._exit(7)
    return "survived"


@server.tool()
async def hang(seconds: float, started: str = "") -> str:
    """Sleep, then answer; first create the file `started`, if given."""
    if started:
        open(started, "w").close()
    await anyio.sleep(seconds)
    return "woke up"


@server.tool(annotations=READ_ONLY)
def huge(size: int) -> str:
    """A text of `size` characters."""
    return "x" * (size - 3) + "end"


@server.tool()
def spawn_child() -> str:
    """Start a long-lived child process (same process group) and return its pid."""
    child = subprocess.Popen(["sleep", "300"], stdin=subprocess.DEVNULL)
    return str(child.pid)


@server.tool()
def spawn_detached() -> str:
    """Start a long-lived child in a session of its own (as a daemon would) and return its
    pid: no process-group kill reaches it."""
    child = subprocess.Popen(["sleep", "300"], stdin=subprocess.DEVNULL, start_new_session=True)
    return str(child.pid)


@server.tool(annotations=READ_ONLY)
def env(name: str) -> str:
    """The value of an environment variable in the server, or '<unset>'."""
    return os.environ.get(name, "<unset>")


@server.tool()
async def add_tool(name: str, ctx: Context) -> str:
    """Add a tool called `name` and tell the client the list changed."""
    server.add_tool(lambda: name, name=name, description=f"added at run time: {name}")
    await ctx.notify_tools_changed()  # to subscribers (2026-07-28)
    send = getattr(ctx.session, "send_tool_list_changed", None)
    if send is not None:
        await send()  # as a notification (2025-11-25 and older)
    return "added"


if __name__ == "__main__":
    if "--http" in sys.argv:
        port = int(sys.argv[sys.argv.index("--http") + 1])
        server.run("streamable-http", host="127.0.0.1", port=port, stateless_http=True)
    else:
        server.run("stdio")
