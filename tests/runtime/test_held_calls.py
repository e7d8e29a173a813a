"""Calls an approval gate holds for the caller (`toolsets.mcp.approval`, no approver): the
loop runs the rest of the turn, then ends with the held calls for its caller to decide; and
`answer_when_spent`, the Responses API's `mcp` tools' round limit. With the scripted
provider and a real MCP server in-process."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence

import pytest
from mcp.server.mcpserver import MCPServer

from farmhand.messages import Message, ToolCall
from farmhand.providers.scripted import ScriptedProvider, Step
from farmhand.runtime.events import LoopEvent, LoopFinished, ToolCallFinished
from farmhand.runtime.executor import ToolRouter
from farmhand.runtime.loop import run_loop
from farmhand.tools.choice import NONE
from farmhand.tools.definition import ToolDefinition
from farmhand.toolsets.mcp.approval import ApprovalGate, ApprovalRequired, ApprovalRule
from farmhand.toolsets.mcp.client import MCPToolset
from farmhand.toolsets.wrappers import PrefixedToolset

pytestmark = pytest.mark.anyio

WRITES = ApprovalRule(default=False, always=frozenset({"restock"}))


def make_server(pantry: dict[str, int]) -> MCPServer:
    server = MCPServer("kitchen")

    @server.tool()
    def stock(item: str) -> str:
        """How many of an item are in the pantry."""
        return f"{item}: {pantry.get(item, 0)}"

    @server.tool()
    def restock(item: str, count: int) -> str:
        """Add items to the pantry."""
        pantry[item] = pantry.get(item, 0) + count
        return f"{item}: {pantry[item]}"

    return server


@pytest.fixture
def pantry() -> dict[str, int]:
    return {"apples": 3}


@pytest.fixture
async def kitchen(pantry: dict[str, int]) -> AsyncIterator[MCPToolset]:
    async with MCPToolset("kitchen", lambda: make_server(pantry)) as toolset:
        yield toolset


async def events_of(
    provider: ScriptedProvider,
    router: ToolRouter,
    *,
    max_tool_rounds: int = 10,
    answer_when_spent: bool = False,
) -> list[LoopEvent]:
    loop = run_loop(
        provider,
        [Message.user("restock")],
        router,
        max_tool_rounds=max_tool_rounds,
        answer_when_spent=answer_when_spent,
    )
    return [event async for event in loop]


async def test_a_gate_without_an_approver_raises_for_a_call_its_rule_covers(
    kitchen: MCPToolset, pantry: dict[str, int]
) -> None:
    gate = ApprovalGate(kitchen, "kitchen", WRITES, approver=None)
    assert (await gate.call_tool("stock", {"item": "apples"})).text == "apples: 3"
    with pytest.raises(ApprovalRequired) as held:
        await gate.call_tool("restock", {"item": "apples", "count": 2})
    assert (held.value.server, held.value.tool) == ("kitchen", "restock")
    assert held.value.arguments == {"item": "apples", "count": 2}
    assert pantry == {"apples": 3}  # not run


async def test_the_loop_runs_the_rest_of_the_turn_and_ends_with_the_held_call(
    kitchen: MCPToolset, pantry: dict[str, int]
) -> None:
    router = ToolRouter(
        [PrefixedToolset(ApprovalGate(kitchen, "kitchen", WRITES, None), "kitchen")]
    )
    look = ToolCall("kitchen:stock", {"item": "apples"}, "call_look")
    write = ToolCall("kitchen:restock", {"item": "apples", "count": 2}, "call_write")
    provider = ScriptedProvider([Step.calls(look, write)])
    events = await events_of(provider, router)
    provider.assert_done()  # one turn: the loop does not go on past a held call
    finished = events[-1]
    assert isinstance(finished, LoopFinished)
    assert finished.stop_reason == "client_tool_calls"
    assert finished.held_calls == (write,)
    assert finished.pending_calls == ()
    assert [r.call.id for r in finished.tool_calls] == ["call_look"]
    ran = [e.call.id for e in events if isinstance(e, ToolCallFinished)]
    assert ran == ["call_look"]
    assert [m.role for m in finished.messages] == ["user", "assistant", "tool"]
    assert [c.id for c in finished.messages[1].tool_calls] == ["call_look", "call_write"]
    assert finished.messages[2].content == "apples: 3"
    assert pantry == {"apples": 3}


async def test_a_held_call_beside_a_client_tool_ends_with_both_for_the_caller(
    kitchen: MCPToolset,
) -> None:
    notify = ToolDefinition("notify", "Tell the user", {"type": "object"})
    gate = ApprovalGate(kitchen, "kitchen", WRITES, None)
    router = ToolRouter([PrefixedToolset(gate, "kitchen")], client_tools=[notify])
    write = ToolCall("kitchen:restock", {"item": "pears", "count": 1}, "call_write")
    tell = ToolCall("notify", {}, "call_tell")
    events = await events_of(ScriptedProvider([Step.calls(write, tell)]), router)
    finished = events[-1]
    assert isinstance(finished, LoopFinished)
    assert (finished.held_calls, finished.pending_calls) == ((write,), (tell,))


async def test_answer_when_spent_offers_no_tools_once_the_rounds_are_spent(
    kitchen: MCPToolset,
) -> None:
    router = ToolRouter([PrefixedToolset(kitchen, "kitchen")])

    def no_tools(_: Sequence[Message], tools: Sequence[ToolDefinition]) -> None:
        assert list(tools) == []

    provider = ScriptedProvider(
        [
            Step.calls(ToolCall("kitchen:stock", {"item": "apples"})),
            Step.text("Three apples.", expect=no_tools),
        ]
    )
    events = await events_of(provider, router, max_tool_rounds=1, answer_when_spent=True)
    provider.assert_done()
    assert provider.requests[1].settings.tool_choice == NONE
    finished = events[-1]
    assert isinstance(finished, LoopFinished)
    assert (finished.answer, finished.stop_reason, finished.rounds) == (
        "Three apples.",
        "round_limit",
        1,
    )


async def test_without_answer_when_spent_the_turn_after_the_rounds_keeps_its_tools(
    kitchen: MCPToolset,
) -> None:
    """The loop's own round limit: a turn that answers after the last round is an answer."""
    router = ToolRouter([PrefixedToolset(kitchen, "kitchen")])
    provider = ScriptedProvider(
        [Step.calls(ToolCall("kitchen:stock", {"item": "apples"})), Step.text("Three.")]
    )
    events = await events_of(provider, router, max_tool_rounds=1)
    assert sorted(t.name for t in provider.requests[1].tools) == [
        "kitchen:restock",
        "kitchen:stock",
    ]
    finished = events[-1]
    assert isinstance(finished, LoopFinished) and finished.stop_reason == "stop"
