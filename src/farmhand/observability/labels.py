"""Label values with a bound: what a metric may be labelled with, whatever a request says.

A label takes one value per series for as long as the process lives, so a value taken from
a request (a path, a model or server name a client wrote, a tool name a model made up)
would let any client grow the server's memory without end. Names the operator configured
are kept; anything else becomes one fixed word.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

SEPARATOR = ":"
"""Between a server's name and its tool's in the names the model sees (`server:tool`)."""
FROM_REQUEST = "request"
"""A server (and its tools) a request brought, or a model of a client's project."""
BUILTIN = "builtin"
"""The server label of farmhand's own tools (`rag_query`, JIT discovery, Python functions)."""
UNKNOWN_TOOL = "unknown"
"""A call of a tool that is not offered, or whose arguments could not be read."""
NO_SERVER = "none"


@dataclass(frozen=True)
class LabelBounds:
    """The operator's names: the configured models and MCP servers."""

    models: frozenset[str] = frozenset()
    servers: frozenset[str] = frozenset()

    @classmethod
    def of(cls, models: Iterable[str], servers: Iterable[str]) -> LabelBounds:
        return cls(frozenset(models), frozenset(servers))

    def model(self, name: str) -> str:
        return name if name in self.models else FROM_REQUEST

    def server(self, name: str) -> str:
        return name if name in self.servers else FROM_REQUEST

    def tool(self, exposed: str, *, offered: bool) -> tuple[str, str]:
        """(server, tool) for a call of `exposed` (`server:tool`, or a builtin's name);
        `offered`: the name is one of the tools the chat offers, as the router resolved it."""
        if not offered:
            return NO_SERVER, UNKNOWN_TOOL
        server, separator, tool = exposed.partition(SEPARATOR)
        if not separator:
            return BUILTIN, exposed  # farmhand's own, named by its config or program
        if server in self.servers:
            return server, tool
        return FROM_REQUEST, FROM_REQUEST
