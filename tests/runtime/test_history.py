"""History repair: earlier malformed calls never make a later request invalid."""

from __future__ import annotations

from farmhand.messages import Message, ToolCall, ToolResult
from farmhand.runtime.history import NO_RESULT, repair_history, safe_tool_name


def test_a_clean_history_is_unchanged() -> None:
    call = ToolCall("fs:ls", {"path": "."}, id="call_1")
    history = [
        Message.user("list"),
        Message.assistant("", (call,)),
        Message.tool(ToolResult("call_1", "fs:ls", "a.txt")),
        Message.assistant("a.txt"),
    ]
    assert repair_history(history) == history


def test_a_call_with_an_unusable_name_and_broken_arguments_is_reserialised() -> None:
    broken = ToolCall("list files!", {"raw": "x"}, id="call_1", parse_error="not JSON")
    history = [
        Message.user("list"),
        Message.assistant("", (broken,)),
        Message.tool(ToolResult("call_1", "list files!", "Error: not JSON")),
    ]
    repaired = repair_history(history)
    call = repaired[1].tool_calls[0]
    assert call.name == "list_files" and call.arguments == {} and call.id == "call_1"
    assert repaired[2].name == "list_files" and repaired[2].content == "Error: not JSON"


def test_a_call_without_a_result_gets_one_and_an_orphan_result_becomes_text() -> None:
    call = ToolCall("ls", {}, id="call_1")
    history = [
        Message.user("go"),
        Message.assistant("", (call,)),
        Message.user("and?"),
        Message.tool(ToolResult("call_9", "cat", "file body")),
    ]
    repaired = repair_history(history)
    assert [m.role for m in repaired] == ["user", "assistant", "tool", "user", "user"]
    assert repaired[2].tool_call_id == "call_1" and repaired[2].content == NO_RESULT
    assert "file body" in repaired[4].content and "cat" in repaired[4].content


def test_duplicate_and_missing_ids_are_made_unique_and_results_follow_them() -> None:
    first, second = ToolCall("a", {}, id="same"), ToolCall("b", {}, id="same")
    history = [
        Message.assistant("", (first, second)),
        Message.tool(ToolResult("same", "a", "ra")),
        Message.tool(ToolResult("same", "b", "rb")),
    ]
    repaired = repair_history(history)
    ids = [c.id for c in repaired[0].tool_calls]
    assert len(set(ids)) == 2
    assert [m.tool_call_id for m in repaired[1:]] == ids
    assert [m.content for m in repaired[1:]] == ["ra", "rb"]


def test_safe_tool_name_keeps_what_it_can() -> None:
    assert safe_tool_name("server:read_file") == "server:read_file"
    assert safe_tool_name("read file (v2)") == "read_file_v2"
    assert safe_tool_name("???") == "invalid_tool_call"
    assert len(safe_tool_name("x" * 100)) == 64
