"""The Responses renderer: an event shows its item as it was when the event was written,
whatever the later events add to it; a call the loop runs streams its arguments as the
model writes them."""

from __future__ import annotations

from farmhand.dialects.responses.items import read_conversation
from farmhand.dialects.responses.render import ResponseBuilder
from farmhand.dialects.responses.request import parse_responses
from farmhand.messages import ToolCall, ToolResult, Usage
from farmhand.runtime.events import (
    LoopFinished,
    ReasoningChunk,
    TextChunk,
    ToolCallFinished,
    ToolCallStarted,
    ToolCallWriting,
    TurnStarted,
)


def test_an_added_item_is_shown_as_it_was_when_added() -> None:
    builder = ResponseBuilder(parse_responses({"model": "m", "input": "hay?"}))
    events = [*builder.opening()]
    for event in (ReasoningChunk("Think"), TextChunk("Hay "), TextChunk("is dry.")):
        events += builder.render(event)
    events += builder.render(LoopFinished("Hay is dry.", "stop", 0, Usage(1, 1), ()))
    added = [e["item"] for e in events if e["type"] == "response.output_item.added"]
    done = [e["item"] for e in events if e["type"] == "response.output_item.done"]
    assert [item["type"] for item in added] == ["reasoning", "message"]
    assert all(item["status"] == "in_progress" for item in added)
    assert [item["content"] for item in added] == [[], []]  # the parts come after
    assert [item["status"] for item in done] == ["completed", "completed"]
    assert done[1]["content"][0]["text"] == "Hay is dry."
    assert done[0]["content"][0]["text"] == "Think"


def test_a_call_the_loop_runs_streams_its_arguments_as_they_are_written() -> None:
    builder = ResponseBuilder(parse_responses({"model": "m", "input": "List the farm"}))
    call = ToolCall("fs:list_directory", {"path": "/farm"}, id="call_7")
    pieces = ['{"path": ', '"/fa', 'rm"}']
    events = builder.render(ToolCallWriting(0, "call_7", "fs:list_directory", "", False))
    for piece in pieces:
        events += builder.render(ToolCallWriting(0, "call_7", "fs:list_directory", piece, False))
    [added] = [e for e in events if e["type"] == "response.output_item.added"]
    assert added["item"]["type"] == "mcp_call" and added["item"]["arguments"] == ""
    assert (added["item"]["server_label"], added["item"]["name"]) == ("fs", "list_directory")
    deltas = [e["delta"] for e in events if e["type"] == "response.mcp_call_arguments.delta"]
    assert deltas == pieces

    events = builder.render(ToolCallStarted(call))
    events += builder.render(ToolCallFinished(call, ToolResult("call_7", call.name, "barn")))
    assert [e["type"] for e in events] == [
        "response.mcp_call_arguments.done",
        "response.mcp_call.in_progress",
        "response.mcp_call.completed",
        "response.output_item.done",
    ]
    assert events[0]["arguments"] == call.arguments_json()
    [item] = builder.output
    assert item["status"] == "completed" and item["output"] == "barn" and item["id"] == "call_7"


def test_a_written_call_the_loop_never_runs_ends_incomplete_and_is_not_read_back() -> None:
    builder = ResponseBuilder(parse_responses({"model": "m", "input": "hay?"}))
    builder.render(ToolCallWriting(0, "call_1", "fs:list_directory", '{"path": "/"}', False))
    events = builder.render(TurnStarted(2))  # the loop asked for the turn again
    events += builder.render(TextChunk("Hay."))
    events += builder.render(LoopFinished("Hay.", "stop", 0, Usage(1, 1), ()))
    [dropped] = [e["item"] for e in events if e["type"] == "response.output_item.done"][:1]
    assert dropped["type"] == "mcp_call" and dropped["status"] == "incomplete"

    follow_up = parse_responses({"model": "m", "input": "And?"})
    conversation = read_conversation(follow_up, builder.output)
    assert [(m.role, m.content, m.tool_calls) for m in conversation.messages] == [
        ("assistant", "Hay.", ()),
        ("user", "And?", ()),
    ]
