"""The generic parser: a reply that is one JSON object (a call, calls, or a response)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.parsing.helpers import damaged, json_values, markup_soup, message_of, splits

from farmhand.messages import TextDelta, ToolCallDelta
from farmhand.parsing.generic import GenericParser


def parse(text: str, pieces: list[str] | None = None, **options: Any) -> dict[str, Any]:
    return message_of(GenericParser, text, pieces, **options)


def test_text_that_is_not_such_json_is_content_and_streams_at_once() -> None:
    parser = GenericParser()
    assert parser.feed("Sure: ") == [TextDelta("Sure: ")]
    assert parser.feed('{"tool_call": {}}') == [TextDelta('{"tool_call": {}}')]
    assert parse('  {"answer": 42}')["content"] == '  {"answer": 42}'
    assert parse("[1, 2]")["content"] == "[1, 2]"


def test_response_is_content_decoded_as_it_streams() -> None:
    parser = GenericParser()
    assert parser.feed('{"response": "caf') == [TextDelta("caf")]
    assert parser.feed("\\") == []  # an escape split across chunks
    assert parser.feed("u00e9 \\ud83d") == [TextDelta("é ")]
    assert parser.feed('\\ude00\\n\\"q\\""}') == [TextDelta('😀\n"q"')]
    assert parser.finish() == []


def test_a_response_that_is_not_a_string_is_indented_json() -> None:
    assert parse('{"response": {"a": [1]}}')["content"] == '{\n  "a": [\n    1\n  ]\n}'


def test_one_call() -> None:
    text = '{"tool_call": {"name": "get_weather", "arguments": {"city": "Paris"}}}'
    assert parse(text) == {
        "content": "",
        "reasoning_content": "",
        "tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}],
    }


def test_several_calls_keep_their_ids() -> None:
    text = json.dumps(
        {
            "tool_calls": [
                {"name": "a", "arguments": {"x": 1}, "id": "call1"},
                {"name": "b", "arguments": {}, "id": "call2"},
            ]
        },
        indent=2,
    )
    assert parse(text)["tool_calls"] == [
        {"name": "a", "arguments": {"x": 1}, "id": "call1"},
        {"name": "b", "arguments": {}, "id": "call2"},
    ]


def test_a_call_streams_its_name_then_its_arguments() -> None:
    parser = GenericParser()
    assert parser.feed('{ "tool_call" : { "name" : "t') == []
    [opened] = parser.feed('"')
    assert opened == ToolCallDelta(0, name="t", id=opened.id) and opened.id.startswith("call_")
    assert parser.feed(', "arguments": {"a": "x y') == [ToolCallDelta(0, arguments='{"a":"x y')]


def test_partial_views_match_llamacpp() -> None:
    partial = parse('{"tool_call": {"name": "f", "arguments": {"arg', finish=False)
    assert partial["tool_calls"] == [{"name": "f", "arguments": '{"arg', "partial": True}]


def test_reasoning_before_the_object_is_split_off() -> None:
    message = parse('<think>plan</think>\n{"response": "hi"}')
    assert (message["content"], message["reasoning_content"]) == ("hi", "plan")
    # llama.cpp's generic format is JSON from the first token: a prompt-opened block does
    # not apply.
    assert parse('{"response": "hi"}', thinking_forced_open=True)["content"] == "hi"


def test_output_cut_off_inside_a_call_is_a_call_with_an_error() -> None:
    [got] = parse('{"tool_call": {"name": "f", "arguments": {"a": 1')["tool_calls"]
    assert (got["name"], got["arguments"]) == ("f", {})
    assert "cut off" in got["error"]


def test_output_cut_off_before_the_kind_of_object_is_known_is_text() -> None:
    assert parse('{"tool_ca')["content"] == '{"tool_ca'


@pytest.mark.parametrize(
    "text",
    [
        '{"tool_call": {"name": "f", "arguments": {a: 1}}}',
        '{"tool_call": {"name": "f", "arguments": [1]}}',
        '{"tool_call": "f"}',
        '{"tool_calls": {"name": "f", "arguments": "{not json"}}',
    ],
)
def test_unreadable_calls_are_calls_with_an_error(text: str) -> None:
    message = parse(text)
    [got] = message["tool_calls"]
    assert got["arguments"] == {} and got["error"]
    assert message["content"] == ""


def test_parallel_off_keeps_the_first_call() -> None:
    text = '{"tool_calls": [{"name": "a", "arguments": {}}, {"name": "b", "arguments": {}}]}'
    assert parse(text, parallel_tool_calls=False)["tool_calls"] == [{"name": "a", "arguments": {}}]


# Properties, on generated outputs.

_call = st.fixed_dictionaries(
    {
        "name": st.sampled_from(["f", "special_function"]),
        "arguments": st.dictionaries(st.text(max_size=5), json_values, max_size=3),
    }
)
_replies = st.one_of(
    _call.map(lambda c: {"tool_call": c}),
    st.lists(_call, min_size=1, max_size=3).map(lambda cs: {"tool_calls": cs}),
    st.text(max_size=20).map(lambda t: {"response": t}),
)


@st.composite
def _outputs(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    """A well-formed reply, written compactly or not, and the message it means."""
    reply = draw(_replies)
    indent, ascii_only = draw(st.sampled_from([None, 2])), draw(st.booleans())
    text = json.dumps(reply, indent=indent, ensure_ascii=ascii_only)
    calls = reply.get("tool_calls") or ([reply["tool_call"]] if "tool_call" in reply else [])
    expected = {"content": reply.get("response", ""), "reasoning_content": "", "tool_calls": calls}
    return text, expected


@settings(max_examples=60, deadline=None)
@given(_outputs())
def test_generated_outputs_parse_as_meant_however_they_are_split(
    output: tuple[str, dict[str, Any]],
) -> None:
    text, expected = output
    assert parse(text) == expected
    for pieces in splits(text):
        assert parse(text, pieces) == expected


_markup = st.sampled_from(
    ['{"tool_call": ', '{"tool_calls": [', '{"response": "', '{"name": "f", "arguments": ',
     "\\u00e9", "\\ud83d", "\\", "{", "}", "[", "]", '"', ",", ":", " ", "<think>", "</think>"]
)  # fmt: skip


@settings(max_examples=100, deadline=None)
@given(damaged(_outputs(), _markup))
def test_damaged_outputs_parse_the_same_however_they_are_split(text: str) -> None:
    whole = parse(text)
    for pieces in splits(text, every=3):
        assert parse(text, pieces) == whole


@settings(max_examples=200, deadline=None)
@given(markup_soup(_markup))
def test_arbitrary_text_never_raises(text: str) -> None:
    message = parse(text)
    assert isinstance(message["content"], str)
