"""The Command R7B parser: thinking, responses, and actions that list tool calls."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.parsing.helpers import damaged, json_values, markup_soup, message_of, prose, splits

from farmhand.messages import TextDelta, ToolCallDelta, ToolCallEvent
from farmhand.parsing.command_r import CommandR7BParser, CommandRPlusParser

START, END = "<|START_ACTION|>", "<|END_ACTION|>"
THINK = "<|START_THINKING|>plan<|END_THINKING|>"
WS = " \t\r\n"


def call(call_id: str, name: str, params: Any) -> str:
    return json.dumps({"tool_call_id": call_id, "tool_name": name, "parameters": params})


def action(*calls: str) -> str:
    """An action as the template writes it."""
    return START + "[\n    " + ",\n    ".join(calls) + "\n]" + END


def parse(text: str, pieces: list[str] | None = None, **options: Any) -> dict[str, Any]:
    return message_of(CommandR7BParser, text, pieces, **options)


def test_plain_text_is_content_and_streams_at_once() -> None:
    parser = CommandR7BParser()
    assert parser.feed("Hello ") == [TextDelta("Hello ")]
    assert parser.feed("<|START_RESP") == []
    assert parser.feed("ONSE|>world<|END") == [TextDelta("world")]
    assert parser.feed("_RESPONSE|>") == []
    assert parser.finish() == []


def test_response_tags_are_dropped() -> None:
    message = parse("<|START_RESPONSE|>Hello, world!\nWhat's up?<|END_RESPONSE|>")
    assert message["content"] == "Hello, world!\nWhat's up?"


def test_one_call_keeps_its_id() -> None:
    message = parse(THINK + action(call("0", "get_weather", {"city": "Paris"})))
    assert message == {
        "content": "",
        "reasoning_content": "plan",
        "tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}, "id": "0"}],
    }


def test_several_calls_in_one_action() -> None:
    text = action(call("0", "a", {"x": 1}), call("1", "b", {}))
    assert parse(text)["tool_calls"] == [
        {"name": "a", "arguments": {"x": 1}, "id": "0"},
        {"name": "b", "arguments": {}, "id": "1"},
    ]


def test_text_then_call() -> None:
    message = parse("I'll look it up. " + action(call("0", "f", {})) + "\n")
    assert message["content"] == "I'll look it up. "
    assert [c["name"] for c in message["tool_calls"]] == ["f"]


def test_a_single_call_without_its_list_and_an_id_after_the_name() -> None:
    text = START + '{"tool_name": "f", "parameters": {"a": 1}, "tool_call_id": 7}' + END
    assert parse(text)["tool_calls"] == [{"name": "f", "arguments": {"a": 1}, "id": "7"}]


@pytest.mark.parametrize(
    ("options", "content", "reasoning"),
    [
        ({}, "Hi", "plan"),
        ({"reasoning_in_content": True}, "<think>plan</think>Hi", ""),
        ({"reasoning_format": "none"}, THINK + "Hi", ""),
    ],
)
def test_reasoning(options: dict[str, Any], content: str, reasoning: str) -> None:
    message = parse(THINK + "<|START_RESPONSE|>Hi<|END_RESPONSE|>", **options)
    assert (message["content"], message["reasoning_content"]) == (content, reasoning)


def test_a_call_streams_its_name_and_id_then_its_arguments() -> None:
    parser = CommandR7BParser()
    assert parser.feed(START + '[{"tool_call_id": "0", "tool_name": "f') == []
    assert parser.feed('", ') == [ToolCallDelta(0, name="f", id="0")]
    assert parser.feed('"parameters": {"a": ') == [ToolCallDelta(0, arguments='{"a":')]
    events = parser.feed("1}}]" + END)
    assert events[0] == ToolCallDelta(0, arguments="1}")
    assert isinstance(events[-1], ToolCallEvent) and events[-1].call.id == "0"


def test_output_cut_off_inside_a_call_is_a_call_with_an_error() -> None:
    [got] = parse(START + '[{"tool_call_id": "0", "tool_name": "f", "parameters": {"a"')[
        "tool_calls"
    ]
    assert (got["name"], got["arguments"]) == ("f", {})
    assert "cut off" in got["error"]


@pytest.mark.parametrize(
    "body",
    [
        '[{"tool_call_id": "0", "tool_name": "f", "parameters": {a: 1}}]',
        '[{"tool_call_id": "0", "tool_name": "f", "parameters": {"a": ]',  # closed early
        '[{"tool_call_id": "0", "tool_name": "f", "parameters": [1]}]',
    ],
)
def test_unreadable_calls_are_calls_with_an_error(body: str) -> None:
    message = parse(START + body + END + "after")
    [got] = message["tool_calls"]
    assert (got["name"], got["arguments"]) == ("f", {})
    assert got["error"]
    assert message["content"] == "after"


def test_an_action_that_is_not_json_is_one_call_with_an_error() -> None:
    message = parse(START + "call the weather tool" + END)
    [got] = message["tool_calls"]
    assert got["name"] == "unknown" and "call the weather tool" in got["error"]
    assert message["content"] == ""


def test_parallel_off_keeps_the_first_call_and_drops_the_markup_of_the_rest() -> None:
    message = parse(action(call("0", "a", {}), call("1", "b", {})), parallel_tool_calls=False)
    assert message["content"] == ""
    assert message["tool_calls"] == [{"name": "a", "arguments": {}, "id": "0"}]


# Properties, on generated outputs.

_plain = prose("<|", max_size=12)
_calls = st.lists(
    st.tuples(
        st.sampled_from(["f", "web_search"]), st.dictionaries(st.text(max_size=5), json_values)
    ),
    max_size=3,
)


@st.composite
def _outputs(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    """A well-formed reply (a response, or an action) and the message it means."""
    reasoning, text = draw(_plain), draw(_plain)
    thinks = bool(reasoning.strip(WS))
    calls = draw(_calls)
    head = f"<|START_THINKING|>{reasoning}<|END_THINKING|>" if thinks else ""
    if calls:
        body = action(*(call(str(i), n, a) for i, (n, a) in enumerate(calls)))
    else:
        body = f"<|START_RESPONSE|>{text}<|END_RESPONSE|>"
    expected = {
        "content": "" if calls else text,
        "reasoning_content": reasoning.strip(WS),
        "tool_calls": [{"name": n, "arguments": a, "id": str(i)} for i, (n, a) in enumerate(calls)],
    }
    return head + body, expected


@settings(max_examples=30, deadline=None)
@given(_outputs())
def test_generated_outputs_parse_as_meant_however_they_are_split(
    output: tuple[str, dict[str, Any]],
) -> None:
    text, expected = output
    assert parse(text) == expected
    for pieces in splits(text):
        assert parse(text, pieces) == expected


_markup = st.sampled_from(
    [START, END, "<|START_RESPONSE|>", "<|END_RESPONSE|>", "<|START_THINKING|>",
     "<|END_THINKING|>", '{"tool_call_id": "0", "tool_name": "f", "parameters": ', "[", "]",
     "{", "}", '"', ",", "\\", "\n"]
)  # fmt: skip


@settings(max_examples=100, deadline=None)
@given(damaged(_outputs(), _markup))
def test_damaged_outputs_parse_the_same_however_they_are_split(text: str) -> None:
    whole = parse(text)
    for pieces in splits(text, every=3):
        assert parse(text, pieces) == whole


@settings(max_examples=200, deadline=None)
@given(markup_soup(_markup), st.booleans())
def test_arbitrary_text_never_raises(text: str, forced: bool) -> None:
    message = parse(text, thinking_forced_open=forced)
    assert isinstance(message["content"], str)


# Command A (Cohere2) writes its response in <|START_TEXT|> tags.


def test_command_a_text_tags_are_dropped() -> None:
    message = parse("<|START_TEXT|>Hello<|END_TEXT|>")
    assert message["content"] == "Hello"


# Command R+: `Action:` and a fenced list of {"tool_name", "parameters"}.


def parse_plus(text: str, pieces: list[str] | None = None) -> dict[str, Any]:
    return message_of(CommandRPlusParser, text, pieces)


PLUS_ACTION = (
    'Let me look.\nAction:\n```json\n[\n    {\n        "tool_name": "search",\n'
    '        "parameters": {"q": "a ``` fence ] in a string"}\n    },\n'
    '    {"tool_name": "lookup", "parameters": {}}\n]```<|END_OF_TURN_TOKEN|>'
)


def test_plus_action_list_in_order_and_fence_inside_a_string() -> None:
    message = parse_plus(PLUS_ACTION)
    assert message["content"] == "Let me look.\n"  # the text streams before Action: is seen
    assert message["tool_calls"] == [
        {"name": "search", "arguments": {"q": "a ``` fence ] in a string"}},
        {"name": "lookup", "arguments": {}},
    ]
    for pieces in splits(PLUS_ACTION, every=7):
        assert parse_plus(PLUS_ACTION, pieces) == message


def test_plus_action_word_in_prose_is_text_and_turn_tokens_are_dropped() -> None:
    text = "<|CHATBOT_TOKEN|>Action: none needed.<|END_OF_TURN_TOKEN|>"
    assert parse_plus(text)["content"] == "Action: none needed."


def test_plus_truncated_action_does_not_run() -> None:
    (only,) = parse_plus('Action:\n```json\n[{"tool_name": "f", "parameters": {"a": ')["tool_calls"]
    assert only["name"] == "f" and "cut off" in only["error"]
