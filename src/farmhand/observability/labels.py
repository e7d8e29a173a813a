"""Label values with a bound: what a metric may be labelled with, whatever a request says.

A label takes one value per series for as long as the process lives, so a value taken from
a request (a path, a model or server name a client wrote, a tool name a model made up)
would let any client grow the server's memory without end. Names the operator configured
are kept; anything else becomes one fixed word. A project's models and MCP servers are
named by their project (`namespace/project/name`), those of the operator's project files
always, those of projects written through the API up to a fixed number
(`ClientProjectModels`): a client's project may name a model or a server exactly like one
of the operator's, and is never counted as the operator's.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass

SEPARATOR = ":"
"""Between a server's name and its tool's in the names the model sees (`server:tool`)."""
FROM_REQUEST = "request"
"""A server (and its tools) a request brought, or a project's model past the bound."""
BUILTIN = "builtin"
"""The server label of farmhand's own tools (`rag_query`, JIT discovery, Python functions)."""
UNKNOWN_TOOL = "unknown"
"""A call of a tool that is not offered, or whose arguments could not be read."""
NO_SERVER = "none"
CLIENT_PROJECT_MODELS = 64
"""At most this many model and server labels of projects written through the API, per
process (and as many of their servers' tool labels)."""
NAME_CHARACTERS = 64
"""A project's model, server or tool name is cut to this many characters in its label."""
HAND = "hand"
MODEL = "model"
"""Who made a tool call (the `caller` label): a person by hand (the playground), the model."""


class ClientProjectModels:
    """The model and server labels of projects written through the API (or, a second one,
    their servers' tool labels): a client chooses their names and may write any number of
    projects, so the first `limit` distinct ones are kept and the rest share FROM_REQUEST."""

    def __init__(self, limit: int = CLIENT_PROJECT_MODELS) -> None:
        self.limit = limit
        self.kept: set[str] = set()

    def admit(self, label: str) -> str:
        if label in self.kept:
            return label
        if len(self.kept) >= self.limit:
            return FROM_REQUEST
        self.kept.add(label)
        return label


@dataclass(frozen=True)
class LabelBounds:
    """The operator's names: the configured models and MCP servers. `project`: the
    `namespace/project` a chat runs on (its models and `servers`, the project's own, are
    labelled `namespace/project/name`, never taken for the operator's of the same name);
    `client`: the bound of a project written through the API (None: the operator's own
    project file), `client_tools`: that of its servers' tool names."""

    models: frozenset[str] = frozenset()
    servers: frozenset[str] = frozenset()
    project: str = ""
    client: ClientProjectModels | None = None
    client_tools: ClientProjectModels | None = None
    servers_projects: bool = False
    """`servers` are the project's own (labelled as its), not the operator's."""

    @classmethod
    def of(cls, models: Iterable[str], servers: Iterable[str]) -> LabelBounds:
        return cls(frozenset(models), frozenset(servers))

    def for_project(
        self,
        namespace: str,
        project: str,
        client: ClientProjectModels | None,
        *,
        servers: Iterable[str] | None = None,
        client_tools: ClientProjectModels | None = None,
    ) -> LabelBounds:
        """The bounds of a project's chats: its own configured `servers`, labelled as the
        project's (None: no servers of its own, the operator's names stay)."""
        if servers is None:
            return dataclasses.replace(self, project=f"{namespace}/{project}", client=client)
        return dataclasses.replace(
            self,
            project=f"{namespace}/{project}",
            client=client,
            servers=frozenset(servers),
            client_tools=client_tools,
            servers_projects=True,
        )

    def model(self, name: str) -> str:
        if not self.project:
            return name if name in self.models else FROM_REQUEST
        return self.projects(name)

    def server(self, name: str) -> str:
        if name not in self.servers:
            return FROM_REQUEST
        return self.projects(name) if self.project and self.servers_projects else name

    def projects(self, name: str) -> str:
        """`name` (a model or server of the project) as `namespace/project/name`, bounded
        when a client wrote the project."""
        label = f"{self.project}/{name[:NAME_CHARACTERS]}"
        return label if self.client is None else self.client.admit(label)

    def tool(self, exposed: str, *, offered: bool) -> tuple[str, str]:
        """(server, tool) for a call of `exposed` (`server:tool`, or a builtin's name);
        `offered`: the name is one of the tools the chat offers, as the router resolved it."""
        if not offered:
            return NO_SERVER, UNKNOWN_TOOL
        server, separator, tool = exposed.partition(SEPARATOR)
        if not separator:
            return BUILTIN, exposed  # farmhand's own, named by its config or program
        label = self.server(server)
        if label == FROM_REQUEST:
            return FROM_REQUEST, FROM_REQUEST
        if self.client_tools is None:  # the operator's server: its tools are its config's
            return label, tool
        # A client's server names its tools as it likes: they are bounded too.
        kept = self.client_tools.admit(f"{label}{SEPARATOR}{tool[:NAME_CHARACTERS]}")
        return label, (tool[:NAME_CHARACTERS] if kept != FROM_REQUEST else FROM_REQUEST)
