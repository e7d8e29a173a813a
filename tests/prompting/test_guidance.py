"""Presenting tools and results to small models: when a turn should answer, and how the
results are shown for it."""

from __future__ import annotations

from farmhand.messages import Message, ToolCall, ToolResult
from farmhand.prompting.guidance import (
    ANSWER_FOOTER,
    TOOL_RULES,
    answer_turn,
    results_to_answer,
)
from farmhand.providers.prompt_based import with_tools_block

CALL = ToolCall("list_directory", {"path": "examples"}, id="c1")


def conversation(*results: str) -> list[Message]:
    return [
        Message.system("Be brief."),
        Message.user("Hi"),
        Message.assistant("Hello!"),
        Message.user("List the files in examples."),
        Message.assistant("", (CALL,)),
        *[Message.tool(ToolResult("c1", "list_directory", text)) for text in results],
    ]


def test_successful_results_call_for_an_answer() -> None:
    assert results_to_answer(conversation("[FILE] a.txt"))
    assert results_to_answer(conversation("[FILE] a.txt", "[FILE] b.txt"))


def test_an_error_result_or_no_result_keeps_the_turn_open() -> None:
    assert not results_to_answer(conversation("[FILE] a.txt", "Error: b.txt not found"))
    assert not results_to_answer(conversation("Invalid arguments for list_directory: ..."))
    assert not results_to_answer(conversation()[:-1])  # ends with a user message


def test_a_result_the_tool_flagged_as_an_error_keeps_the_turn_open() -> None:
    # MCP servers word their failures freely ("Access denied - path outside allowed
    # directories"): the flag the tool set is what counts, not the wording.
    denied = ToolResult("c1", "list_directory", "Access denied - /examples", is_error=True)
    history = [*conversation(), Message.tool(denied)]
    assert history[-1].is_error
    assert not results_to_answer(history)


def test_a_result_naming_another_offered_tool_keeps_the_turn_open() -> None:
    # JIT discovery's result lists the tools it made available: one of them is the answer.
    found = "These tools are now available; call them directly:\n- fs:list_directory: List."
    offered = ["mcp_discover", "fs:list_directory"]
    assert not results_to_answer(conversation(found), offered)
    assert results_to_answer(conversation(found), ["mcp_discover"])  # names nothing offered
    # Its own name, or a name inside a longer one or a path, is no request for another call.
    assert results_to_answer(conversation("[FILE] list_directory.md"), ["list_directory"])
    listing = "[FILE] fs:list_directory_with_sizes.txt\n[FILE] docs/fs:list_directory"
    assert results_to_answer(conversation(listing), offered)


def test_answer_turn_shows_the_question_and_results_without_the_calls() -> None:
    turn = answer_turn(conversation("[FILE] a.txt\n[DIR] data"))
    assert [m.role for m in turn] == ["system", "user", "assistant", "user"]
    last = turn[-1].content
    assert last.startswith("List the files in examples.")
    assert "[list_directory]\n[FILE] a.txt\n[DIR] data" in last
    assert last.endswith(ANSWER_FOOTER)
    assert all(not m.tool_calls for m in turn)


def test_rules_join_the_system_prompt() -> None:
    (system, *_) = with_tools_block(conversation(), TOOL_RULES)
    assert system.content.startswith("Be brief.\n\nRules for tools:")
