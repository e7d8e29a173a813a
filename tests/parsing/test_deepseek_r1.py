"""The DeepSeek R1 parser: `<think>` reasoning, and calls between its tool-call tokens."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.parsing.helpers import damaged, json_values, markup_soup, message_of, prose, splits

from farmhand.messages import TextDelta, ToolCallDelta, ToolCallEvent
from farmhand.parsing.deepseek_r1 import DeepSeekR1Parser

BEGIN = "<｜tool▁calls▁begin｜>"
END = "<｜tool▁calls▁end｜>"
WS = " \t\r\n"


def call(name: str, args: str, *, newline: bool = True, begin: bool = True) -> str:
    """One call as the template writes it (`newline`: before the closing fence)."""
    head = "<｜tool▁call▁begin｜>" if begin else ""
    tail = "\n```" if newline else "```"
    return f"{head}function<｜tool▁sep｜>{name}\n```json\n{args}{tail}<｜tool▁call▁end｜>"


def parse(text: str, pieces: list[str] | None = None, **options: Any) -> dict[str, Any]:
    return message_of(DeepSeekR1Parser, text, pieces, **options)


def test_plain_text_is_content_and_streams_at_once() -> None:
    parser = DeepSeekR1Parser()
    assert parser.feed("Hello, ") == [TextDelta("Hello, ")]
    assert parser.feed("world <｜tool") == [TextDelta("world ")]  # may be a call token
    assert parser.feed("ing>") == [TextDelta("<｜tooling>")]
    assert parser.finish() == []


def test_one_call() -> None:
    message = parse(BEGIN + call("get_weather", '{"city": "Paris"}') + END)
    assert message == {
        "content": "",
        "reasoning_content": "",
        "tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}],
    }


def test_several_calls_in_one_block() -> None:
    text = BEGIN + call("a", '{"x": 1}') + "\n" + call("b", '{"code": "```py\\n```"}') + END
    assert parse(text)["tool_calls"] == [
        {"name": "a", "arguments": {"x": 1}},
        {"name": "b", "arguments": {"code": "```py\n```"}},
    ]


def test_text_before_the_block_is_kept_and_after_it_is_text() -> None:
    message = parse("Let me check.\n\n" + BEGIN + call("f", "{}") + END + "\n\nDone.")
    assert message["content"] == "Let me check.\n\nDone."
    assert [c["name"] for c in message["tool_calls"]] == ["f"]


def test_variants_models_write() -> None:
    text = "<｜tool▁calls｜>" + call("f", '{"a": 1}', newline=False, begin=False) + END
    assert parse(text)["tool_calls"] == [{"name": "f", "arguments": {"a": 1}}]
    bare = '<｜tool▁call▁begin｜>f\n{"a": 1}<｜tool▁call▁end｜> ok'
    assert parse(bare) == {
        "content": "ok",
        "reasoning_content": "",
        "tool_calls": [{"name": "f", "arguments": {"a": 1}}],
    }


@pytest.mark.parametrize(
    ("options", "content", "reasoning"),
    [
        ({}, "Hi", "plan"),
        ({"reasoning_in_content": True}, "<think>plan</think>Hi", ""),
        ({"reasoning_format": "none"}, "<think>plan</think>\nHi", ""),
    ],
)
def test_reasoning(options: dict[str, Any], content: str, reasoning: str) -> None:
    message = parse("<think>plan</think>\nHi", **options)
    assert (message["content"], message["reasoning_content"]) == (content, reasoning)


def test_reasoning_when_the_prompt_opened_it() -> None:
    text = "plan</think>\n" + BEGIN + call("f", "{}") + END
    message = parse(text, thinking_forced_open=True)
    assert message["reasoning_content"] == "plan"
    assert message["content"] == ""
    assert [c["name"] for c in message["tool_calls"]] == ["f"]


def test_a_call_streams_its_name_then_its_arguments() -> None:
    parser = DeepSeekR1Parser()
    assert parser.feed(BEGIN + "<｜tool▁call▁begin｜>function<｜tool▁sep｜>f") == []
    [opened] = parser.feed("\n```json\n")
    assert opened == ToolCallDelta(0, name="f", id=opened.id) and opened.id.startswith("call_")
    assert parser.feed('{"a": [1, ') == [ToolCallDelta(0, arguments='{"a":[1,')]
    [done] = parser.feed("2]}\n```<｜tool▁call▁end｜>")[-1:]
    assert isinstance(done, ToolCallEvent) and done.call.arguments == {"a": [1, 2]}
    assert done.call.id == opened.id  # the id a streaming client saw first


def test_output_cut_off_inside_a_call_is_a_call_with_an_error() -> None:
    [got] = parse(BEGIN + '<｜tool▁call▁begin｜>function<｜tool▁sep｜>f\n```json\n{"a": ')[
        "tool_calls"
    ]
    assert got["name"] == "f" and got["arguments"] == {}
    assert "cut off" in got["error"] and '{"a":' in got["error"]


@pytest.mark.parametrize("after", ["", "  \n"])
def test_output_cut_off_after_the_name_line_still_ends_the_call(after: str) -> None:
    # Found by test_properties: the call was announced (its name streamed) and never ended.
    text = "<｜tool▁call▁begin｜>function<｜tool▁sep｜>f\n" + after
    [got] = parse(text, list(text))["tool_calls"]
    assert got["name"] == "f" and got["arguments"] == {}
    assert "cut off" in got["error"]


@pytest.mark.parametrize("args", ["{a: 1}", "not json", '["a"]'])
def test_unreadable_arguments_are_a_call_with_an_error(args: str) -> None:
    message = parse(BEGIN + call("f", args) + END + "after")
    [got] = message["tool_calls"]
    assert (got["name"], got["arguments"]) == ("f", {})
    assert got["error"]
    assert message["content"] == "after"  # no call markup leaks into the text


def test_parallel_off_keeps_the_first_call_and_drops_the_markup_of_the_rest() -> None:
    text = "x" + BEGIN + call("a", "{}") + call("b", "{}") + END
    message = parse(text, parallel_tool_calls=False)
    assert message["content"] == "x"
    assert [c["name"] for c in message["tool_calls"]] == ["a"]


def test_parse_tool_calls_off_leaves_everything_as_text() -> None:
    text = BEGIN + call("f", "{}") + END
    assert parse(text, parse_tool_calls=False)["content"] == text


# Properties, on generated outputs.

_plain = prose("<｜`", max_size=12)
_args = st.dictionaries(st.text(max_size=5), json_values, max_size=3)
_calls = st.lists(
    st.tuples(st.sampled_from(["f", "get_weather"]), _args, st.booleans(), st.booleans()),
    min_size=1,
    max_size=3,
)


@st.composite
def _outputs(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    """A well-formed reply and the message it means."""
    reasoning, pre, post = draw(_plain), draw(_plain), draw(_plain)
    thinks = bool(reasoning.strip(WS))
    calls = draw(_calls)
    block = BEGIN + "\n".join(call(n, json.dumps(a), newline=nl, begin=b) for n, a, nl, b in calls)
    text = (f"<think>{reasoning}</think>" if thinks else "") + pre + block + END + post
    expected = {
        "content": (pre.lstrip(WS) if thinks else pre) + post.lstrip(WS),
        "reasoning_content": reasoning.strip(WS),
        "tool_calls": [{"name": n, "arguments": a} for n, a, _, _ in calls],
    }
    return text, expected


@settings(max_examples=40, deadline=None)
@given(_outputs())
def test_generated_outputs_parse_as_meant_however_they_are_split(
    output: tuple[str, dict[str, Any]],
) -> None:
    text, expected = output
    assert parse(text) == expected
    for pieces in splits(text):
        assert parse(text, pieces) == expected


_markup = st.sampled_from(
    [BEGIN, END, "<｜tool▁calls｜>", "<｜tool▁call▁begin｜>", "<｜tool▁call▁end｜>",
     "function<｜tool▁sep｜>f\n", "```json\n", "```", "<think>", "</think>", "{", "}", '"', "\n"]
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
