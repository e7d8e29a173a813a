"""Just-in-time tool discovery: the model starts with one tool, `mcp_discover(pattern)`.

Small models drown in hundreds of tool definitions (and every definition costs prompt
tokens), so in JIT mode the model sees only `mcp_discover`; a call injects the few tools that
match its pattern, ranked by relevance (`rank_tools`), and the loop, which lists the tools
again every turn, offers them from the next turn on.
Servers start at the first discovery that needs them, unless `connect_eager`.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Sequence
from contextlib import AbstractAsyncContextManager, AsyncExitStack
from dataclasses import dataclass, field
from typing import Any

import anyio
from anyio.abc import TaskGroup

from farmhand.errors import ToolError, ToolServerError
from farmhand.messages import Message
from farmhand.tools.definition import SEPARATOR, ToolDefinition
from farmhand.tools.glob import Glob
from farmhand.toolsets.base import ToolOutput, Toolset

DISCOVER = "mcp_discover"
DISCOVER_TOOL = ToolDefinition(
    DISCOVER,
    "Find tools to use. Give a glob pattern over tool names and descriptions, such as"
    " *file*, *list*, *git* or *; the best matching tools become available to call.",
    {
        "type": "object",
        "properties": {
            "pattern": {
                "type": "string",
                "description": "Glob over `server:tool` names and descriptions, e.g. *file*",
            }
        },
        "required": ["pattern"],
    },
    annotations={"readOnlyHint": True},
)


@dataclass(frozen=True)
class ServerSource:
    """A server the discovery layer may start: `open()` gives its tools (under their own
    names, wrappers applied) for as long as the context is entered."""

    name: str
    description: str
    open: Callable[[], AbstractAsyncContextManager[Toolset]]
    capabilities: tuple[str, ...] = ()
    """The definition's tags (files, git, ...); a pattern matching one, or the description,
    finds all of the server's tools."""

    @property
    def label(self) -> str:
        """The name, with what the server is for when it says."""
        about = "; ".join(part for part in (self.description, ", ".join(self.capabilities)) if part)
        return f"{self.name} ({about})" if about else self.name


@dataclass
class _Connection:
    source: ServerSource
    toolset: Toolset | None = None
    error: BaseException | None = None
    started: bool = False
    ready: anyio.Event = field(default_factory=anyio.Event)


class DiscoveryToolset:
    """`mcp_discover` plus the tools it has injected, named `server:tool`.

    Use as `async with`. Servers are held open by tasks of this toolset's own task group, so
    a server first needed inside a tool call (a task of the loop's) still closes in the task
    that opened it, as the MCP SDK's cancel scopes require.
    """

    def __init__(
        self,
        sources: Sequence[ServerSource],
        *,
        max_tools: int = 5,
        connect_eager: bool = False,
    ) -> None:
        self._connections = {s.name: _Connection(s) for s in sources}
        self.max_tools = max_tools
        self.connect_eager = connect_eager
        self._injected: dict[str, ToolDefinition] = {}
        self._conversation = ""
        self._stack = AsyncExitStack()
        self._group: TaskGroup | None = None
        self._closing = anyio.Event()

    async def __aenter__(self) -> DiscoveryToolset:
        self._group = await self._stack.enter_async_context(anyio.create_task_group())
        self._stack.callback(self._closing.set)  # runs first: lets the holders leave
        if self.connect_eager:
            try:
                for connection in self._connections.values():
                    self._start(connection)  # side by side
                for name in self._connections:
                    await self._connect(name)
            except BaseException:
                await self._stack.aclose()
                raise
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self._stack.aclose()

    def note_conversation(self, messages: Sequence[Message]) -> None:
        recent = [m.content for m in messages if m.role == "user"][-3:]
        self._conversation = "\n".join(recent)

    @property
    def sources(self) -> list[ServerSource]:
        return [c.source for c in self._connections.values()]

    @property
    def injected(self) -> list[str]:
        return list(self._injected)

    async def list_tools(self) -> list[ToolDefinition]:
        return [DISCOVER_TOOL, *self._injected.values()]

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> ToolOutput:
        if name == DISCOVER:
            return await self._discover(str(arguments.get("pattern") or "*"))
        server, _, tool = name.partition(SEPARATOR)
        if server not in self._connections or not tool:
            return ToolOutput(f"no tool named {name!r}; call {DISCOVER} to find one", True)
        toolset = await self._connect(server)
        return await toolset.call_tool(tool, arguments)

    async def search(self, pattern: str, context: str = "") -> tuple[list[ToolDefinition], str]:
        """Every tool matching `pattern`, most relevant first, and a note on servers that
        could not be reached (empty when all answered)."""
        tools, problems = await self.all_tools()
        glob = tool_glob(pattern)
        servers = {
            name
            for name, connection in self._connections.items()
            if server_matches(glob, connection.source)
        }
        matching = [t for t in tools if matches(glob, t) or t.name.split(SEPARATOR)[0] in servers]
        ranked = rank_tools(matching, pattern, context)
        return ranked, "; ".join(problems)

    async def all_tools(self) -> tuple[list[ToolDefinition], list[str]]:
        """The tools of every server, named `server:tool`; problems of unreachable servers."""
        tools: list[ToolDefinition] = []
        problems: list[str] = []
        for connection in self._connections.values():
            self._start(connection)  # all at once: servers start side by side
        for name in self._connections:
            try:
                toolset = await self._connect(name)
                listed = await toolset.list_tools()
            except ToolError as exc:
                problems.append(str(exc))
                continue
            tools.extend(dataclasses.replace(t, name=f"{name}{SEPARATOR}{t.name}") for t in listed)
        return tools, problems

    async def _discover(self, pattern: str) -> ToolOutput:
        ranked, problems = await self.search(pattern, self._conversation)
        note = f"\n(Some servers could not be reached: {problems})" if problems else ""
        heading = "These tools are now available; call them directly:"
        if not ranked:
            # Small models often search for the user's words ("*papers*"): offer the tools
            # closest to the conversation rather than nothing.
            everything, _ = await self.all_tools()
            ranked = [
                t
                for t in rank_tools(everything, pattern, self._conversation)
                if relevance(t, pattern, self._conversation) >= 0.5  # shares a word
            ]
            heading = (
                f"No tool matches {pattern!r}; these, closest to the conversation, are now"
                " available; call them directly:"
            )
        if not ranked:
            servers = ", ".join(c.source.label for c in self._connections.values())
            return ToolOutput(
                f"No tools match {pattern!r}. Servers: {servers or 'none'}. Try a broader"
                f" pattern, such as '*'.{note}"
            )
        chosen = ranked[: self.max_tools]
        for tool in chosen:
            self._injected[tool.name] = tool
        lines = [f"- {t.name}: {_first_line(t.description)}" for t in chosen]
        rest = ranked[self.max_tools :]
        more = (
            f"\n{len(rest)} more matched ({', '.join(t.name for t in rest[:10])}"
            f"{', ...' if len(rest) > 10 else ''}); use a narrower pattern to get them."
            if rest
            else ""
        )
        return ToolOutput(heading + "\n" + "\n".join(lines) + more + note, offers_tools=True)

    async def _connect(self, name: str) -> Toolset:
        connection = self._connections[name]
        self._start(connection)
        await connection.ready.wait()
        if connection.toolset is None:
            error = connection.error
            raise (
                error
                if isinstance(error, ToolError)
                else ToolServerError(f"MCP server {name!r} could not start: {error}")
            )
        return connection.toolset

    def _start(self, connection: _Connection) -> None:
        if not connection.started:
            if self._group is None:
                raise ToolServerError("DiscoveryToolset used outside `async with`")
            connection.started = True
            self._group.start_soon(self._hold, connection)

    async def _hold(self, connection: _Connection) -> None:
        try:
            async with connection.source.open() as toolset:
                connection.toolset = toolset
                connection.ready.set()
                await self._closing.wait()
        except Exception as exc:
            connection.error = exc
        finally:
            connection.toolset = None
            connection.ready.set()


def tool_glob(pattern: str) -> Glob:
    """A search pattern as the glob `matches` uses: case-insensitive, and a pattern without
    wildcards matches anywhere (`file` means `*file*`)."""
    glob = Glob.parse(pattern.strip().lower() or "*")
    return glob if glob.wildcards else Glob.parse(f"*{pattern.strip().lower()}*")


def matches(glob: Glob, tool: ToolDefinition) -> bool:
    """Whether `glob` (`tool_glob`) matches the `server:tool` name, the server's name alone
    (`*git*` means every git tool) or the description."""
    name = tool.name.lower()
    texts = (name, name.split(SEPARATOR, 1)[0], " ".join(tool.description.lower().split()))
    return any(glob.match(text) for text in texts)


def server_matches(glob: Glob, source: ServerSource) -> bool:
    """Whether `glob` matches what the server's definition says it is for: its description
    or one of its capabilities (`*sql*` finds a server tagged "sql" whatever its tools are
    called)."""
    texts = (
        " ".join(source.description.lower().split()),
        *(c.lower() for c in source.capabilities),
    )
    return any(text and glob.match(text) for text in texts)


def _first_line(text: str) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line[:200]


# Words that say nothing about which tool is meant.
_STOPWORDS = frozenset(
    re.findall(
        r"\w+",
        "the and for with from that this what which are was were you your can could would"
        " please into onto about all any some there here them then than have has how show"
        " tell give our its use using tool tools",
    )
)
# What users say for what servers call it.
_SYNONYMS = {"folder": "directory", "dir": "directory", "repo": "repository", "doc": "file"}


def rank_tools(
    tools: Sequence[ToolDefinition], pattern: str, conversation: str = ""
) -> list[ToolDefinition]:
    """The tools, most relevant first (see `relevance`). Ties keep the server's own order,
    never the alphabet: with "list the files in the folder", `list_directory` must come out
    ahead of `create_directory` even when every tool matched `*`."""
    wanted, said = _words(pattern), _words(conversation)
    order = {id(t): i for i, t in enumerate(tools)}
    return sorted(tools, key=lambda t: (-_score(t, wanted, said), order[id(t)]))


def relevance(tool: ToolDefinition, pattern: str, conversation: str = "") -> float:
    """How well a tool fits: the pattern's words and the conversation's words found in its
    name (strong) and description (weak); read-only tools a little ahead of writers, and
    deprecated ones far behind."""
    return _score(tool, _words(pattern), _words(conversation))


def _score(tool: ToolDefinition, wanted: set[str], said: set[str]) -> float:
    name = _words(tool.name.split(SEPARATOR, 1)[-1])
    description = _words(tool.description)
    value = 3.0 * len(wanted & name) + 1.0 * len(wanted & description)
    value += 2.0 * len(said & name) + 0.5 * len(said & description)
    # A name made only of words the user or the pattern used is what they asked for:
    # "list the files in the folder" is list_directory, more than read_text_file.
    if name:
        value += 4.0 * len(name & (wanted | said)) / len(name)
    value += 0.25 if tool.read_only else 0.0
    return value - (5.0 if "deprecated" in tool.description.lower() else 0.0)


def _words(text: str) -> set[str]:
    """Lower-case word stems: snake_case and camelCase split, plurals and -ing dropped."""
    spaced = re.sub(r"([a-z])([A-Z])", r"\1 \2", text)
    words = re.findall(r"[a-z0-9]+", spaced.lower())
    return {_stem(w) for w in words if len(w) > 2 and w not in _STOPWORDS}


def _stem(word: str) -> str:
    word = _SYNONYMS.get(word, word)
    for suffix, replacement in (("ies", "y"), ("ing", ""), ("s", "")):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)] + replacement
            break
    return _SYNONYMS.get(word, word)
