"""Bounds on the work one request may cause, each checked before the work starts.

Every number here caps an amplification a client could otherwise ask for with a small
request: references that expand to stored items, glob patterns matched over every tool,
MCP sessions held open on `/mcp`, A2A tasks left running, and the full text of long tool
results kept on disk.
Each has an upper limit too, so a typo of a few extra digits is an error, not a bound
that is no bound.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from farmhand.config.strict import STRICT_CONFIG

MIB = 1024 * 1024
DEPTH_CEILING = 200
"""The most a nesting limit may be raised to: building deeper YAML or templates recurses
towards Python's own limit."""


class _Section(BaseModel):
    model_config = STRICT_CONFIG


class LimitsConfig(_Section):
    """What one request may make the server do (`server.limits`)."""

    max_item_references: int = Field(default=100, ge=0, le=100_000)
    """Most `item_reference` items one Responses request may hold (each is looked up in
    the store and expands to the whole stored item)."""
    max_reference_chars: int = Field(default=8 * MIB, ge=0, le=1024 * MIB)
    """Most characters (of the items' JSON) the `item_reference` items of one request may
    expand to, counted before any item is read."""
    max_search_pattern_chars: int = Field(default=256, ge=1, le=1_000_000)
    """Longest glob pattern a tool search may send (`/api/tools/search`, the MCP face's
    `search_tools`)."""
    max_search_wildcards: int = Field(default=16, ge=0, le=100_000)
    """Most wildcards (`*`, `?`, `[...]`) in one tool search pattern."""
    max_agent_tasks: int = Field(default=8, ge=1, le=100_000)
    """Most A2A tasks (`/a2a`) one client may have running or waiting on a question at
    once: a task outlives the request that started it, so this bounds what a client can
    leave running; another message is refused until one ends."""
    max_agent_tasks_total: int = Field(default=64, ge=1, le=1_000_000)
    """Most A2A tasks running or waiting on a question at once, all clients together."""


class McpSessionsConfig(_Section):
    """Sessions of farmhand's own MCP server at `/mcp` (`server.mcp_sessions`). A client
    is the API key it sends, or its address when the server has no keys."""

    max_per_client: int = Field(default=8, ge=1, le=100_000)
    """Most sessions one client holds; opening another closes its least recently used
    one, so a client that opens sessions in a loop only ever replaces its own."""
    max_total: int = Field(default=64, ge=1, le=1_000_000)
    """Most sessions open at once; opening another closes the least recently used one."""
    idle_timeout: float = Field(default=300.0, gt=0, le=7 * 24 * 3600)
    """Seconds a session may go without a request before it is closed (the client opens
    a new one: a request on a closed session is a 404, as MCP says)."""


class SavedResultsConfig(_Section):
    """The full text of tool results cut at `max_tool_result_chars`, kept under
    $FARMHAND_HOME/results/ for the user to read (`runtime.saved_results`)."""

    max_bytes: int = Field(default=256 * MIB, ge=0, le=1024 * 1024 * MIB)
    """Most bytes the saved results may take together; the oldest files are removed to
    make room, and a result larger than this is not saved (the cut result says so)."""
    max_age_days: float = Field(default=7.0, gt=0, le=3650)
    """Days a saved result is kept."""
