"""The Gemma 4 parser: `<|tool_call>call:NAME{...}<tool_call|>` with `<|"|>` strings, and the
`<|channel>thought` reasoning channel (format: google/gemma-4 chat_template.jinja)."""

from __future__ import annotations

from typing import Any

from tests.parsing.helpers import (
    arguments_text,
    events_of,
    message_of,
    splits,
    view,
)

from farmhand.messages import ToolCallDelta
from farmhand.parsing.gemma4 import Gemma4Parser

Q = '<|"|>'


def call(name: str, body: str) -> str:
    return f"<|tool_call>call:{name}{body}<tool_call|>"


def parse(text: str, pieces: list[str] | None = None, **options: Any) -> dict[str, Any]:
    return message_of(Gemma4Parser, text, pieces, **options)


def test_strings_numbers_literals_lists_and_objects() -> None:
    body = (
        f"{{city:{Q}Paris{Q},days:3,ratio:-1.5e2,on:true,off:null,"
        f"tags:[{Q}a{Q},{Q}b{Q}],o:{{k:1}}}}"
    )
    assert parse(call("get", body))["tool_calls"] == [
        {
            "name": "get",
            "arguments": {
                "city": "Paris",
                "days": 3,
                "ratio": -150.0,
                "on": True,
                "off": None,
                "tags": ["a", "b"],
                "o": {"k": 1},
            },
        }
    ]


def test_markers_inside_a_string_do_not_end_the_call() -> None:
    value = 'say "}<tool_call|>{" and \\ too'
    message = parse(call("echo", f"{{text:{Q}{value}{Q}}}") + "after")
    assert message["tool_calls"] == [{"name": "echo", "arguments": {"text": value}}]
    assert message["content"] == "after"


def test_whitespace_and_unicode_in_values_are_kept_exactly() -> None:
    value = "  two  spaces\n\ttab · 東京 🌸  "
    message = parse(call("note", f"{{text:{Q}{value}{Q}}}"))
    assert message["tool_calls"][0]["arguments"] == {"text": value}


def test_several_calls_in_order_and_text_before() -> None:
    text = "Checking." + call("a", "{x:1}") + call("b", "{}") + "<|tool_response>"
    message = parse(text)
    assert message["content"] == "Checking."
    assert [c["name"] for c in message["tool_calls"]] == ["a", "b"]


def test_a_bare_word_value_is_a_string() -> None:
    assert parse(call("get", "{city:London}"))["tool_calls"][0]["arguments"] == {"city": "London"}


def test_arguments_stream_as_json_and_every_split_agrees() -> None:
    text = call("get", f"{{city:{Q}San Francisco{Q},n:2}}")
    events = events_of(Gemma4Parser, text, step=1)
    assert events[0] == ToolCallDelta(0, name="get", id=events[0].id)  # type: ignore[union-attr]
    assert arguments_text(events) == '{"city":"San Francisco","n":2}'
    whole = view(events_of(Gemma4Parser, text))
    for pieces in splits(text):
        assert view(events_of(Gemma4Parser, text, pieces=pieces)) == whole


def test_truncated_call_is_not_a_call_that_runs() -> None:
    message = parse(f"<|tool_call>call:get{{city:{Q}Par")
    (only,) = message["tool_calls"]
    assert only["name"] == "get"
    assert "cut off" in only["error"]


def test_mismatched_brackets_become_a_call_with_an_error() -> None:
    (only,) = parse(call("get", "{a:[1}") + "tail")["tool_calls"]
    assert "could not read" in only["error"]


def test_reasoning_channel_is_split_and_stray_tokens_dropped() -> None:
    text = "<|channel>thought\nplan<channel|>Hi<|channel>thought\n<channel|><channel|>"
    message = parse(text, reasoning_format="auto")
    assert message["reasoning_content"] == "plan"
    assert message["content"] == "Hi"


def test_without_reasoning_split_channels_stay_text() -> None:
    text = "<|channel>thought\nplan<channel|>Hi"
    assert parse(text, reasoning_format="none")["content"] == text


def test_a_later_channel_stays_in_the_text_when_reasoning_goes_in_content() -> None:
    text = "Hi<|channel>thought\nmore<channel|>there"
    message = parse(text, reasoning_format="auto", reasoning_in_content=True)
    assert message["content"] == "Hi<think>more</think>there"


def test_a_bare_value_of_a_string_argument_stays_a_string() -> None:
    schemas = {"get": {"properties": {"zip": {"type": "string"}, "n": {"type": "integer"}}}}
    text = call("get", "{zip:12345,n:3}")
    (only,) = parse(text, tool_schemas=schemas)["tool_calls"]
    assert only["arguments"] == {"zip": "12345", "n": 3}
