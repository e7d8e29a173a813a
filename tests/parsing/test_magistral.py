"""The Magistral parser (Mistral Small 3.2, Ministral 3, Devstral, Magistral):
`[TOOL_CALLS]NAME[CALL_ID]ID[ARGS]{...}` per call and `[THINK]...[/THINK]` reasoning (format:
mistralai/Mistral-Small-3.2-24B-Instruct-2506 and Ministral-3 chat templates)."""

from __future__ import annotations

import json
from typing import Any

from tests.parsing.helpers import (
    arguments_text,
    events_of,
    message_of,
    splits,
    view,
)

from farmhand.messages import ToolCallDelta
from farmhand.parsing.mistral import MagistralParser


def parse(text: str, pieces: list[str] | None = None, **options: Any) -> dict[str, Any]:
    return message_of(MagistralParser, text, pieces, **options)


def test_calls_with_and_without_ids_in_order() -> None:
    text = 'Hi[TOOL_CALLS]a[ARGS]{"x": 1}[TOOL_CALLS]b[CALL_ID]000000002[ARGS]{}'
    message = parse(text)
    assert message["content"] == "Hi"
    assert message["tool_calls"] == [
        {"name": "a", "arguments": {"x": 1}},
        {"name": "b", "arguments": {}, "id": "000000002"},
    ]


def test_a_marker_inside_a_string_does_not_end_the_call() -> None:
    value = 'x"}[TOOL_CALLS]g[ARGS]{"  '
    text = "[TOOL_CALLS]f[ARGS]" + json.dumps({"s": value, "n": {"deep": ["é", 1]}})
    assert parse(text)["tool_calls"] == [
        {"name": "f", "arguments": {"s": value, "n": {"deep": ["é", 1]}}}
    ]


def test_reasoning_is_split_and_may_mention_calls() -> None:
    text = '[THINK]maybe [TOOL_CALLS]f[ARGS]{}[/THINK][TOOL_CALLS]f[ARGS]{"a": 1}'
    message = parse(text, reasoning_format="auto")
    assert message["reasoning_content"] == "maybe [TOOL_CALLS]f[ARGS]{}"
    assert message["tool_calls"] == [{"name": "f", "arguments": {"a": 1}}]


def test_arguments_stream_and_every_split_agrees() -> None:
    text = 'ok[TOOL_CALLS]f[ARGS]{"a": [1, 2], "b": "c d"}'
    events = events_of(MagistralParser, text, step=1)
    assert ToolCallDelta(0, name="f") in events
    assert arguments_text(events) == '{"a":[1,2],"b":"c d"}'
    whole = view(events_of(MagistralParser, text))
    for pieces in splits(text):
        assert view(events_of(MagistralParser, text, pieces=pieces)) == whole


def test_truncated_and_broken_calls_do_not_run() -> None:
    (cut,) = parse('[TOOL_CALLS]f[ARGS]{"a": "unfinish')["tool_calls"]
    assert cut["name"] == "f" and "cut off" in cut["error"]
    (broken,) = parse("[TOOL_CALLS]f[ARGS]not json")["tool_calls"]
    assert broken["name"] == "f" and "could not read" in broken["error"]
