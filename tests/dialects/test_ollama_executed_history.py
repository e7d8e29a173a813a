"""A final message that listed the MCP calls farmhand ran, sent back in a later request's
history: which of its calls the model still sees (`chat_request`)."""

from __future__ import annotations

from typing import Any

from farmhand.dialects.ollama.chat import ChatBody, chat_request
from farmhand.messages import Message

LISTING = {"function": {"name": "filesystem:list_directory", "arguments": {"path": "/tmp"}}}
OWN_TOOL = {"type": "function", "function": {"name": "notes:add", "parameters": {}}}


def history(*calls: dict[str, Any], answered: bool = False, **body: Any) -> list[Message]:
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "List /tmp"},
        {"role": "assistant", "content": "It holds a.txt.", "tool_calls": list(calls)},
    ]
    if answered:
        messages.append({"role": "tool", "content": "[FILE] a.txt"})
    messages.append({"role": "user", "content": "And now?"})
    return list(chat_request(ChatBody(model="m", messages=messages, **body)).messages)


def test_a_record_of_calls_that_ran_leaves_only_the_answer() -> None:
    for record in (LISTING, {**LISTING, "executed": True}):  # the SDK drops the mark
        assert history(record)[1] == Message("assistant", "It holds a.txt.")


def test_a_marked_call_is_a_record_whatever_its_name() -> None:
    marked = {"function": {"name": "lookup", "arguments": {}}, "executed": True}
    assert history(marked)[1].tool_calls == ()
    assert [c.name for c in history({**marked, "executed": False})[1].tool_calls] == ["lookup"]


def test_answered_calls_and_the_clients_own_calls_stay() -> None:
    kept = history(LISTING, answered=True)
    assert [c.name for c in kept[1].tool_calls] == ["filesystem:list_directory"]
    assert kept[2].role == "tool" and kept[2].content == "[FILE] a.txt"
    own = {"function": {"name": "notes:add", "arguments": {}}}
    assert [c.name for c in history(own, tools=[OWN_TOOL])[1].tool_calls] == ["notes:add"]


def test_a_message_left_empty_keeps_its_turn() -> None:
    messages = [
        {"role": "user", "content": "List /tmp"},
        {"role": "assistant", "content": "", "tool_calls": [LISTING]},
        {"role": "user", "content": "Well?"},
    ]
    kept = chat_request(ChatBody(model="m", messages=messages)).messages
    assert kept[1] == Message("assistant", "")  # turns still alternate for strict templates
