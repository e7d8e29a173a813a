"""The tool loop, with the scripted provider and a real MCP server in-process."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence

import pytest
from mcp.server.mcpserver import MCPServer

from farmhand.errors import ProviderError
from farmhand.messages import Finish, Message, TextDelta, ToolCall
from farmhand.providers.base import GenerationSettings
from farmhand.providers.scripted import ScriptedProvider, Step
from farmhand.runtime.events import LoopEvent, LoopFinished, ToolCallFinished, ToolCallStarted
from farmhand.runtime.executor import ToolRouter
from farmhand.runtime.loop import run_loop, run_to_completion
from farmhand.tools.choice import NONE
from farmhand.tools.definition import ToolDefinition
from farmhand.toolsets.mcp.client import MCPToolset
from farmhand.toolsets.wrappers import PrefixedToolset

pytestmark = pytest.mark.anyio


def make_server() -> MCPServer:
    server = MCPServer("kitchen")
    pantry = {"apples": 3, "flour": 0}

    @server.tool()
    def stock(item: str) -> str:
        """How many of an item are in the pantry."""
        if item not in pantry:
            raise ValueError(f"no such item: {item}")
        return f"{item}: {pantry[item]}"

    @server.tool()
    def restock(item: str, count: int) -> str:
        """Add items to the pantry."""
        pantry[item] = pantry.get(item, 0) + count
        return f"{item}: {pantry[item]}"

    return server


@pytest.fixture
async def router() -> AsyncIterator[ToolRouter]:
    async with MCPToolset("kitchen", make_server) as toolset:
        yield ToolRouter([PrefixedToolset(toolset, "kitchen")])


def user(text: str) -> list[Message]:
    return [Message.user(text)]


def last_tool_messages(messages: Sequence[Message]) -> list[str]:
    tail: list[str] = []
    for message in reversed(messages):
        if message.role != "tool":
            break
        tail.insert(0, message.content)
    return tail


async def test_tools_are_offered_under_server_prefixed_names(router: ToolRouter) -> None:
    def offered(_: Sequence[Message], tools: Sequence[ToolDefinition]) -> None:
        assert sorted(t.name for t in tools) == ["kitchen:restock", "kitchen:stock"]
        stock = next(t for t in tools if t.name == "kitchen:stock")
        assert stock.parameters["required"] == ["item"]

    provider = ScriptedProvider([Step.text("hi", expect=offered)])
    result = await run_to_completion(provider, user("hello"), router)
    assert result.answer == "hi"
    provider.assert_done()


async def test_multi_round_calls_feed_results_back(router: ToolRouter) -> None:
    def sees_stock(messages: Sequence[Message], _: Sequence[ToolDefinition]) -> None:
        assert last_tool_messages(messages) == ["flour: 0"]

    def sees_restock(messages: Sequence[Message], _: Sequence[ToolDefinition]) -> None:
        assert last_tool_messages(messages) == ["flour: 5"]

    provider = ScriptedProvider(
        [
            Step.calls(ToolCall("kitchen:stock", {"item": "flour"})),
            Step.calls(
                ToolCall("kitchen:restock", {"item": "flour", "count": 5}), expect=sees_stock
            ),
            Step.text("Flour restocked: 5.", expect=sees_restock),
        ]
    )
    result = await run_to_completion(provider, user("restock flour"), router)
    provider.assert_done()
    assert result.answer == "Flour restocked: 5."
    assert result.stop_reason == "stop"
    assert result.rounds == 2
    assert [(r.call.name, r.result.content) for r in result.tool_calls] == [
        ("kitchen:stock", "flour: 0"),
        ("kitchen:restock", "flour: 5"),
    ]
    roles = [m.role for m in result.messages]
    assert roles == ["user", "assistant", "tool", "assistant", "tool", "assistant"]


async def test_all_calls_of_a_turn_run_and_results_keep_their_order(router: ToolRouter) -> None:
    first, second = (
        ToolCall("kitchen:stock", {"item": "apples"}),
        ToolCall("kitchen:stock", {"item": "flour"}),
    )
    provider = ScriptedProvider([Step.calls(first, second), Step.text("done")])
    events: list[LoopEvent] = [e async for e in run_loop(provider, user("stock?"), router)]
    finished = [e for e in events if isinstance(e, ToolCallFinished)]
    assert [(e.call.id, e.result.call_id) for e in finished] == [
        (first.id, first.id),
        (second.id, second.id),
    ]
    assert [e.result.content for e in finished] == ["apples: 3", "flour: 0"]
    started = [e.call.id for e in events if isinstance(e, ToolCallStarted)]
    assert started == [first.id, second.id]


async def test_a_failing_tool_becomes_an_error_result_and_the_loop_goes_on(
    router: ToolRouter,
) -> None:
    def told(messages: Sequence[Message], _: Sequence[ToolDefinition]) -> None:
        [content] = last_tool_messages(messages)
        assert "stock" in content

    provider = ScriptedProvider(
        [
            Step.calls(ToolCall("kitchen:stock", {"item": "caviar"})),
            Step.text("No caviar.", expect=told),
        ]
    )
    result = await run_to_completion(provider, user("caviar?"), router)
    [record] = result.tool_calls
    assert record.result.is_error
    assert result.answer == "No caviar."


async def test_an_unknown_tool_is_reported_to_the_model_with_the_tools_it_has(
    router: ToolRouter,
) -> None:
    provider = ScriptedProvider([Step.calls(ToolCall("kitchen:oven", {})), Step.text("Sorry.")])
    result = await run_to_completion(provider, user("bake"), router)
    [record] = result.tool_calls
    assert record.result.is_error
    assert "no tool named 'kitchen:oven'" in record.result.content
    assert "kitchen:restock, kitchen:stock" in record.result.content


async def test_a_call_without_the_server_prefix_resolves_when_unambiguous(
    router: ToolRouter,
) -> None:
    provider = ScriptedProvider([Step.calls(ToolCall("stock", {"item": "apples"})), Step.text("3")])
    result = await run_to_completion(provider, user("apples?"), router)
    [record] = result.tool_calls
    assert record.call.name == "kitchen:stock"
    assert record.result.content == "apples: 3"
    assistant_call = result.messages[1].tool_calls[0]
    assert assistant_call.name == "kitchen:stock"  # history carries the full name


async def test_a_malformed_call_is_not_run_and_the_model_is_told_why(router: ToolRouter) -> None:
    broken = ToolCall("kitchen:restock", {}, parse_error="the arguments are not valid JSON")
    provider = ScriptedProvider([Step.calls(broken), Step.text("Let me retry.")])
    result = await run_to_completion(provider, user("restock"), router)
    [record] = result.tool_calls
    assert record.result.is_error
    assert "not valid JSON" in record.result.content


async def test_the_round_limit_ends_with_one_answer_turn_without_tools(
    router: ToolRouter,
) -> None:
    items = ["apples", "flour", "sugar", "salt"]
    steps = [Step.calls(ToolCall("kitchen:restock", {"item": i, "count": 1})) for i in items]
    provider = ScriptedProvider([*steps, Step.text("Restocked three items.")])
    result = await run_to_completion(provider, user("loop"), router, max_tool_rounds=3)
    provider.assert_done()
    assert result.stop_reason == "round_limit"
    assert result.rounds == 3
    assert len(result.tool_calls) == 3  # the fourth turn's call was not run
    assert result.answer == "Restocked three items."
    assert provider.requests[4].settings.tool_choice == NONE


async def test_inline_tools_are_handed_back_to_the_caller(router: ToolRouter) -> None:
    notify = ToolDefinition("custom.send_notification", "Notify the user", {"type": "object"})
    mixed = ToolRouter(router._toolsets, client_tools=[notify])
    call = ToolCall("custom.send_notification", {"message": "hi"})
    provider = ScriptedProvider([Step.calls(call, ToolCall("kitchen:stock", {"item": "apples"}))])
    result = await run_to_completion(provider, user("notify"), mixed)
    assert result.stop_reason == "client_tool_calls"
    assert result.pending_calls == (call,)
    assert [r.result.content for r in result.tool_calls] == ["apples: 3"]


async def test_parallel_tool_calls_false_runs_only_the_first_call(router: ToolRouter) -> None:
    provider = ScriptedProvider(
        [
            Step.calls(
                ToolCall("kitchen:stock", {"item": "apples"}),
                ToolCall("kitchen:stock", {"item": "flour"}),
            ),
            Step.text("ok"),
        ]
    )
    settings = GenerationSettings(parallel_tool_calls=False)
    result = await run_to_completion(provider, user("stock"), router, settings)
    assert [r.result.content for r in result.tool_calls] == ["apples: 3"]


async def test_a_provider_error_propagates_as_itself(router: ToolRouter) -> None:
    provider = ScriptedProvider([Step.fail(ProviderError("backend is down"))])
    with pytest.raises(ProviderError, match="backend is down"):
        await run_to_completion(provider, user("hi"), router)


async def test_usage_is_summed_over_turns(router: ToolRouter) -> None:
    from farmhand.messages import Usage

    provider = ScriptedProvider(
        [
            Step.calls(ToolCall("kitchen:stock", {"item": "apples"}), usage=Usage(10, 2)),
            Step.text("3 apples", usage=Usage(20, 3)),
        ]
    )
    result = await run_to_completion(provider, user("apples"), router)
    assert (result.usage.prompt_tokens, result.usage.completion_tokens) == (30, 5)
    assert isinstance(result, LoopFinished)


async def test_a_model_repeating_a_call_gets_one_turn_without_tools_to_answer(
    router: ToolRouter,
) -> None:
    def asked_to_answer(messages: Sequence[Message], _: Sequence[ToolDefinition]) -> None:
        (asked,) = messages  # the question and its result in one plain turn, no calls
        assert asked.role == "user" and not asked.tool_calls
        assert asked.content.startswith("how many apples?")
        assert "[kitchen:stock]\napples: 3" in asked.content

    again = ToolCall("kitchen:stock", {"item": "apples"})
    provider = ScriptedProvider(
        [
            Step.calls(ToolCall("kitchen:stock", {"item": "apples"})),
            Step.calls(again),
            Step.text("There are 3 apples.", expect=asked_to_answer),
        ]
    )
    result = await run_to_completion(provider, user("how many apples?"), router)
    provider.assert_done()
    assert result.answer == "There are 3 apples."
    assert result.rounds == 1
    assert len(result.tool_calls) == 1  # the repeat was not run
    assert provider.requests[2].settings.tool_choice == NONE
    # the stuck turn is not kept in the history the caller gets back
    assert [m.role for m in result.messages] == ["user", "assistant", "tool", "assistant"]


async def test_a_repeat_beside_a_new_call_is_answered_from_history_not_rerun(
    router: ToolRouter,
) -> None:
    provider = ScriptedProvider(
        [
            Step.calls(ToolCall("kitchen:restock", {"item": "flour", "count": 1})),
            Step.calls(
                ToolCall("kitchen:restock", {"item": "flour", "count": 1}),
                ToolCall("kitchen:stock", {"item": "flour"}),
            ),
            Step.text("flour: 1"),
        ]
    )
    result = await run_to_completion(provider, user("restock flour once"), router)
    assert [r.result.content for r in result.tool_calls] == ["flour: 1", "flour: 1"]
    tool_messages = [m.content for m in result.messages if m.role == "tool"]
    assert tool_messages[1].startswith("This exact call was already made")
    assert tool_messages[2] == "flour: 1"  # restock ran once: a rerun would have made it 2


async def test_arguments_that_break_the_schema_are_never_run(router: ToolRouter) -> None:
    # restock needs an integer count: the model gets told which field is wrong, and the
    # pantry is untouched until it calls again correctly.
    provider = ScriptedProvider(
        [
            Step.calls(ToolCall("kitchen:restock", {"item": "flour", "count": "many"})),
            Step.calls(ToolCall("kitchen:restock", {"item": "flour", "count": 2})),
            Step.text("Restocked."),
        ]
    )
    result = await run_to_completion(provider, user("restock flour"), router)
    first, second = (r.result for r in result.tool_calls)
    assert first.is_error
    assert "invalid arguments for kitchen:restock" in first.content
    assert "count" in first.content
    assert second.content == "flour: 2"  # the bad call added nothing


async def test_a_client_tool_called_with_bad_arguments_goes_back_to_the_model(
    router: ToolRouter,
) -> None:
    notify = ToolDefinition(
        "notify",
        "Notify the user",
        {"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]},
    )
    mixed = ToolRouter(router._toolsets, client_tools=[notify])
    good = ToolCall("notify", {"message": "hi"})
    provider = ScriptedProvider([Step.calls(ToolCall("notify", {})), Step.calls(good)])
    result = await run_to_completion(provider, user("notify"), mixed)
    assert result.stop_reason == "client_tool_calls"
    assert result.pending_calls == (good,)
    assert "message" in result.tool_calls[0].result.content
    assert "required" in result.tool_calls[0].result.content


async def test_schemas_reach_the_provider_normalised(router: ToolRouter) -> None:
    odd = ToolDefinition(
        "odd",
        "",
        {
            "type": "dict",
            "properties": {"where": {"$ref": "#/$defs/place", "description": None}},
            "$defs": {"place": {"type": "str"}},
        },
    )
    provider = ScriptedProvider([Step.text("ok")])
    await run_to_completion(provider, user("hi"), ToolRouter(client_tools=[odd]))
    sent = provider.requests[0].tools[0].parameters
    assert sent == {"type": "object", "properties": {"where": {"type": "string"}}}


async def test_the_stop_string_that_ended_the_answer_is_in_loop_finished() -> None:
    provider = ScriptedProvider([[TextDelta("Four."), Finish("stop", stop_sequence="\n\nUser:")]])
    done = await run_to_completion(provider, user("2+2?"), ToolRouter([]))
    assert (done.answer, done.stop_reason, done.stop_sequence) == ("Four.", "stop", "\n\nUser:")
    plain = await run_to_completion(
        ScriptedProvider([Step.text("Four.")]), user("2+2?"), ToolRouter([])
    )
    assert plain.stop_sequence is None
