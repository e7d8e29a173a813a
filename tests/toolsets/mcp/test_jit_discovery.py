"""JIT discovery in the loop: the model starts with `mcp_discover` only, and the tools it
finds are offered from the next turn on. Real MCP servers in-process, scripted model."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager

import pytest
from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

from farmhand.messages import Message, ToolCall
from farmhand.providers.scripted import ScriptedProvider, Step
from farmhand.runtime.executor import ToolRouter
from farmhand.runtime.loop import run_to_completion
from farmhand.tools.choice import AUTO, REQUIRED
from farmhand.tools.definition import ToolDefinition
from farmhand.toolsets.base import Toolset
from farmhand.toolsets.mcp.client import MCPToolset
from farmhand.toolsets.mcp.discovery import DISCOVER, DiscoveryToolset, ServerSource

pytestmark = pytest.mark.anyio

# The official filesystem server's 14 tools (descriptions shortened), in its own order.
FILESYSTEM_TOOLS = {
    "read_file": "Read a file. DEPRECATED: use read_text_file instead.",
    "read_text_file": "Read the complete contents of a file as text.",
    "read_media_file": "Read an image or audio file.",
    "read_multiple_files": "Read the contents of multiple files at once.",
    "write_file": "Create a new file or overwrite an existing file.",
    "edit_file": "Make line-based edits to a text file.",
    "create_directory": "Create a new directory.",
    "list_directory": "Get a detailed listing of all files and directories in a path.",
    "list_directory_with_sizes": "List files and directories in a path, with sizes.",
    "directory_tree": "Get a recursive tree view of files and directories as JSON.",
    "move_file": "Move or rename files and directories.",
    "search_files": "Recursively search for files and directories matching a pattern.",
    "get_file_info": "Retrieve metadata about a file or directory.",
    "list_allowed_directories": "List the directories this server is allowed to access.",
}
WRITERS = {"write_file", "edit_file", "create_directory", "move_file"}


def filesystem_server() -> MCPServer:
    server = MCPServer("filesystem")
    for name, description in FILESYSTEM_TOOLS.items():
        annotations = ToolAnnotations(read_only_hint=name not in WRITERS)
        server.add_tool(
            _answers_as(name), name=name, description=description, annotations=annotations
        )
    return server


def _answers_as(name: str) -> Callable[[str], str]:
    def tool(path: str = ".") -> str:
        return f"{name}({path}): invoice.pdf, notes.txt"

    return tool


def clock_server() -> MCPServer:
    server = MCPServer("clock")

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    def now() -> str:
        """The current time."""
        return "12:00"

    return server


class Opened:
    """Counts which servers were started."""

    def __init__(self) -> None:
        self.names: list[str] = []

    def source(
        self,
        name: str,
        make: Callable[[], MCPServer],
        description: str = "",
        capabilities: tuple[str, ...] = (),
    ) -> ServerSource:
        @asynccontextmanager
        async def open_server() -> AsyncIterator[Toolset]:
            self.names.append(name)
            async with MCPToolset(name, make) as toolset:
                yield toolset

        about = description or f"{name} tools"
        return ServerSource(name, about, open_server, capabilities=capabilities)


def discovery(opened: Opened, **options: object) -> DiscoveryToolset:
    sources = [
        opened.source("filesystem", filesystem_server),
        opened.source("clock", clock_server),
    ]
    return DiscoveryToolset(sources, **options)  # type: ignore[arg-type]


def offered(names: Sequence[str]) -> Callable[[Sequence[Message], Sequence[ToolDefinition]], None]:
    def check(_: Sequence[Message], tools: Sequence[ToolDefinition]) -> None:
        assert [t.name for t in tools] == list(names)

    return check


async def test_the_model_first_sees_only_mcp_discover_and_no_server_starts() -> None:
    opened = Opened()
    async with discovery(opened) as jit:
        provider = ScriptedProvider([Step.text("hello", expect=offered([DISCOVER]))])
        await run_to_completion(provider, [Message.user("hi")], ToolRouter([jit]))
    assert opened.names == []  # lazy: nothing was needed


async def test_eager_connection_starts_every_server_up_front() -> None:
    opened = Opened()
    async with discovery(opened, connect_eager=True):
        assert opened.names == ["filesystem", "clock"]


async def test_a_listing_tool_is_injected_even_when_all_14_tools_match() -> None:
    opened = Opened()
    question = "List the files in the papers folder."
    async with discovery(opened, max_tools=5) as jit:
        router = ToolRouter([jit])
        provider = ScriptedProvider(
            [
                Step.calls(ToolCall(DISCOVER, {"pattern": "filesystem:*"})),
                Step.calls(ToolCall("filesystem:list_directory", {"path": "papers"})),
                Step.text("invoice.pdf and notes.txt"),
            ]
        )
        result = await run_to_completion(provider, [Message.user(question)], router)
    provider.assert_done()
    assert opened.names == ["filesystem", "clock"]  # started at the first discovery

    second_turn = [t.name for t in provider.requests[1].tools]
    assert second_turn[0] == DISCOVER
    injected = second_turn[1:]
    assert len(injected) == 5
    assert "filesystem:list_directory" in injected
    assert not {f"filesystem:{w}" for w in WRITERS} & set(injected)  # a listing was asked
    assert "filesystem:read_file" not in injected  # deprecated

    discover_result, listing = (r.result for r in result.tool_calls)
    assert "9 more matched" in discover_result.content
    assert listing.content == "list_directory(papers): invoice.pdf, notes.txt"
    assert result.answer == "invoice.pdf and notes.txt"


async def test_the_turn_after_tools_were_offered_must_call_and_the_next_may_answer() -> None:
    # The 1.5B model, asked to answer from a discovery's list of tools, made up 300 file names.
    question = "List the files in the papers folder."
    async with discovery(Opened()) as jit:
        provider = ScriptedProvider(
            [
                Step.calls(ToolCall(DISCOVER, {"pattern": "*list*"})),
                Step.calls(ToolCall("filesystem:list_directory", {"path": "papers"})),
                Step.text("invoice.pdf and notes.txt"),
            ]
        )
        await run_to_completion(provider, [Message.user(question)], ToolRouter([jit]))
    provider.assert_done()
    choices = [r.settings.tool_choice for r in provider.requests]
    assert choices == [AUTO, REQUIRED, AUTO]


async def test_a_discovery_that_found_nothing_leaves_the_choice_to_the_model() -> None:
    async with discovery(Opened()) as jit:
        provider = ScriptedProvider(
            [Step.calls(ToolCall(DISCOVER, {"pattern": "*weather*"})), Step.text("No tool.")]
        )
        await run_to_completion(provider, [Message.user("Weather?")], ToolRouter([jit]))
    provider.assert_done()
    assert [r.settings.tool_choice for r in provider.requests] == [AUTO, AUTO]


async def test_discovery_ranks_by_the_pattern_before_the_conversation() -> None:
    async with discovery(Opened(), max_tools=2) as jit:
        jit.note_conversation([Message.user("what time is it?")])
        output = await jit.call_tool(DISCOVER, {"pattern": "*search*"})
    assert "filesystem:search_files" in output.text
    assert await jit.list_tools() != []


async def test_a_pattern_without_wildcards_matches_descriptions_too() -> None:
    async with discovery(Opened()) as jit:
        ranked, problems = await jit.search("current time")
    assert [t.name for t in ranked] == ["clock:now"]
    assert problems == ""


async def test_no_match_tells_the_model_which_servers_exist() -> None:
    async with discovery(Opened()) as jit:
        output = await jit.call_tool(DISCOVER, {"pattern": "*database*"})
        tools = await jit.list_tools()
    assert "No tools match '*database*'" in output.text
    assert "filesystem (filesystem tools), clock (clock tools)" in output.text
    assert [t.name for t in tools] == [DISCOVER]


async def test_a_server_that_fails_to_start_is_reported_and_the_others_still_work() -> None:
    @asynccontextmanager
    async def broken() -> AsyncIterator[Toolset]:
        raise RuntimeError("no such program")
        yield  # pragma: no cover

    opened = Opened()
    sources = [ServerSource("broken", "", broken), opened.source("clock", clock_server)]
    async with DiscoveryToolset(sources) as jit:
        output = await jit.call_tool(DISCOVER, {"pattern": "*"})
    assert "clock:now" in output.text
    assert "no such program" in output.text


async def test_inline_tools_are_offered_beside_discovery_and_handed_back() -> None:
    notify = ToolDefinition("notify", "Tell the user something", {"type": "object"})
    async with discovery(Opened()) as jit:
        router = ToolRouter([jit], client_tools=[notify])
        call = ToolCall("notify", {"message": "done"})
        provider = ScriptedProvider(
            [
                Step.calls(
                    ToolCall(DISCOVER, {"pattern": "*time*"}), expect=offered([DISCOVER, "notify"])
                ),
                Step.calls(
                    ToolCall("clock:now", {}),
                    call,
                    expect=offered([DISCOVER, "clock:now", "notify"]),
                ),
            ]
        )
        result = await run_to_completion(provider, [Message.user("time?")], router)
    assert result.stop_reason == "client_tool_calls"
    assert result.pending_calls == (call,)
    assert [r.result.content for r in result.tool_calls][-1] == "12:00"


async def test_a_pattern_naming_a_server_matches_all_its_tools() -> None:
    async with discovery(Opened()) as jit:
        ranked, _ = await jit.search("*filesystem")
    assert len(ranked) == len(FILESYSTEM_TOOLS)


async def test_a_pattern_of_the_users_words_falls_back_to_the_closest_tools() -> None:
    # Small models search for what the user said ("*papers*"), which no tool is named after.
    async with discovery(Opened(), max_tools=3) as jit:
        jit.note_conversation([Message.user("List the files in the papers folder.")])
        output = await jit.call_tool(DISCOVER, {"pattern": "*papers*"})
        injected = jit.injected
    assert output.text.startswith("No tool matches '*papers*'; these, closest to the")
    assert injected[0] == "filesystem:list_directory"
    assert len(injected) == 3


async def test_the_users_request_outweighs_the_word_in_the_pattern() -> None:
    # What the real 0.5B model did: asked to list files, it searched for "*file*", which
    # matches nine tools by name; the listing tool must still be among the five injected.
    async with discovery(Opened()) as jit:
        jit.note_conversation([Message.user("List the files in the examples folder.")])
        await jit.call_tool(DISCOVER, {"pattern": "*file*"})
        injected = jit.injected
    assert "filesystem:list_directory" in injected
    assert injected[0] == "filesystem:list_directory"


async def test_a_servers_description_and_capabilities_find_its_tools() -> None:
    # The definitions' fields (Ollama's MCP design): no tool is named or described after
    # "storage" or "shared drive", but the server that holds them says it is that.
    opened = Opened()
    shelf = opened.source(
        "shelf", filesystem_server, "The team's shared drive", capabilities=("storage",)
    )
    async with DiscoveryToolset([shelf, opened.source("clock", clock_server)]) as jit:
        jit.note_conversation([Message.user("What is on the shelf?")])
        output = await jit.call_tool(DISCOVER, {"pattern": "*storage*"})
        injected = jit.injected
        by_description, _ = await jit.search("shared drive")
        nothing = await jit.call_tool(DISCOVER, {"pattern": "*database*"})
    assert output.text.startswith("These tools are now available")
    assert len(injected) == 5 and all(name.startswith("shelf:") for name in injected)
    assert len(by_description) == len(FILESYSTEM_TOOLS)
    assert "shelf (The team's shared drive; storage), clock (clock tools)" in nothing.text
