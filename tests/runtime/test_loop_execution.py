"""How the loop runs the calls of one turn: which side by side, which in order, and what the
caller gets back when a result was too long for the model."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import pytest
from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

from farmhand.messages import Message, ToolCall
from farmhand.providers.scripted import ScriptedProvider, Step
from farmhand.runtime.executor import ToolRouter
from farmhand.runtime.loop import run_to_completion
from farmhand.toolsets.mcp.client import MCPToolset
from farmhand.toolsets.wrappers import CappedResults, PrefixedToolset

pytestmark = pytest.mark.anyio

READ_ONLY = ToolAnnotations(read_only_hint=True)


def make_server(log: list[str]) -> MCPServer:
    """`peek` is read-only and waits for its twin: two peeks finish only if they run at once.
    `write` is not annotated: writes must run one at a time, in the order given."""
    server = MCPServer("desk")
    both_peeking = anyio.Event()
    peeking = 0
    writing = 0

    @server.tool(annotations=READ_ONLY)
    async def peek(label: str) -> str:
        """Look at something (read-only)."""
        nonlocal peeking
        peeking += 1
        if peeking == 2:
            both_peeking.set()
        with anyio.fail_after(5):  # a deadline, not a sleep: fails if run one at a time
            await both_peeking.wait()
        return f"saw {label}"

    @server.tool()
    async def write(label: str) -> str:
        """Write something."""
        nonlocal writing
        writing += 1
        log.append(f"start {label} ({writing} writing)")
        for _ in range(20):
            await anyio.lowlevel.checkpoint()  # room for another write to interleave
        writing -= 1
        log.append(f"end {label}")
        return f"wrote {label}"

    @server.tool(annotations=READ_ONLY)
    def dump(size: int) -> str:
        """A long output."""
        return "".join(f"line {i:05d}\n" for i in range(size))

    return server


@pytest.fixture
async def desk() -> AsyncIterator[tuple[ToolRouter, list[str]]]:
    log: list[str] = []
    async with MCPToolset("desk", lambda: make_server(log)) as toolset:
        yield ToolRouter([PrefixedToolset(toolset, "desk")]), log


async def test_read_only_calls_of_a_turn_run_side_by_side(
    desk: tuple[ToolRouter, list[str]],
) -> None:
    router, _ = desk
    calls = [ToolCall("desk:peek", {"label": "a"}), ToolCall("desk:peek", {"label": "b"})]
    provider = ScriptedProvider([Step.calls(*calls), Step.text("ok")])
    result = await run_to_completion(provider, [Message.user("peek")], router)
    assert [r.result.content for r in result.tool_calls] == ["saw a", "saw b"]


async def test_calls_that_may_write_run_one_at_a_time_in_the_models_order(
    desk: tuple[ToolRouter, list[str]],
) -> None:
    router, log = desk
    calls = [ToolCall("desk:write", {"label": x}) for x in ("first", "second", "third")]
    provider = ScriptedProvider([Step.calls(*calls), Step.text("ok")])
    result = await run_to_completion(provider, [Message.user("write")], router)
    assert [r.result.content for r in result.tool_calls] == [
        "wrote first",
        "wrote second",
        "wrote third",
    ]
    assert log == [
        "start first (1 writing)",
        "end first",
        "start second (1 writing)",
        "end second",
        "start third (1 writing)",
        "end third",
    ]


async def test_the_serial_lane_rule_follows_read_only_annotations(
    desk: tuple[ToolRouter, list[str]],
) -> None:
    router, _ = desk
    await router.list_tools()
    assert router.serial_lane(ToolCall("desk:peek", {"label": "a"})) is None
    assert router.serial_lane(ToolCall("desk:write", {"label": "a"})) == "desk"
    assert router.serial_lane(ToolCall("write", {"label": "a"})) == "desk"  # prefix dropped


async def test_a_long_result_is_cut_for_the_model_but_complete_for_the_caller(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FARMHAND_HOME", str(tmp_path))
    async with MCPToolset("desk", lambda: make_server([])) as toolset:
        router = ToolRouter([PrefixedToolset(CappedResults(toolset, max_chars=1000), "desk")])
        provider = ScriptedProvider(
            [Step.calls(ToolCall("desk:dump", {"size": 500})), Step.text("ok")]
        )
        result = await run_to_completion(provider, [Message.user("dump")], router)

    full = "".join(f"line {i:05d}\n" for i in range(500))
    [record] = result.tool_calls
    assert record.result.content == full  # include_tool_results gets every character

    seen = next(m.content for m in result.messages if m.role == "tool")
    assert len(seen) <= 1000
    assert seen.startswith("line 00000\n")
    assert seen.endswith("line 00499\n")
    [saved] = (tmp_path / "results").iterdir()
    assert saved.read_text() == full
    assert f"characters cut here; the full text is in {saved}" in seen
    assert f"of {len(full)} characters" in seen
