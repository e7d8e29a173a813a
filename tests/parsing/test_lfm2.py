"""The LFM2 / LFM2.5 parser: `<|tool_call_start|>[f(a=1), g(b="x")]<|tool_call_end|>`
(format: LiquidAI/LFM2 chat_template.jinja), built on the shared pythonic list reader."""

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
from tests.support.corpus import CORPUS

from farmhand.messages import ToolCallDelta
from farmhand.parsing.lfm2 import Lfm2Parser

START, END = "<|tool_call_start|>", "<|tool_call_end|>"


def parse(text: str, pieces: list[str] | None = None, **options: Any) -> dict[str, Any]:
    return message_of(Lfm2Parser, text, pieces, **options)


def test_python_literals_become_json() -> None:
    text = START + '[f(a=1, b="x", c=True, d=None, e=[1, \'y\'], g={"k": false})]' + END
    assert parse(text)["tool_calls"] == [
        {
            "name": "f",
            "arguments": {"a": 1, "b": "x", "c": True, "d": None, "e": [1, "y"], "g": {"k": False}},
        }
    ]


def test_several_calls_in_order_with_dotted_names() -> None:
    text = "Sure." + START + "[Calendar.add(t='a'), g(), h(n=2)]" + END + " Done."
    message = parse(text)
    assert message["content"] == "Sure.Done."  # whitespace after calls belongs to no one
    assert [(c["name"], c["arguments"]) for c in message["tool_calls"]] == [
        ("Calendar.add", {"t": "a"}),
        ("g", {}),
        ("h", {"n": 2}),
    ]


def test_markers_and_brackets_inside_strings_do_not_end_the_call() -> None:
    value = "a), b=2]<|tool_call_end|> 'q' \\\" end"
    text = START + "[f(s=" + repr(value) + ")]" + END
    assert parse(text)["tool_calls"] == [{"name": "f", "arguments": {"s": value}}]


def test_whitespace_and_unicode_kept_exactly() -> None:
    value = "  a\n\tb 東京 🌸 "
    text = START + f"[f(s={value!r})]" + END
    assert parse(text)["tool_calls"][0]["arguments"] == {"s": value}


def test_arguments_stream_key_by_key() -> None:
    text = START + '[f(a=1, b="two")]' + END
    events = events_of(Lfm2Parser, text, step=1)
    assert events[0] == ToolCallDelta(0, name="f", id=events[0].id)  # type: ignore[union-attr]
    assert arguments_text(events) == '{"a": 1, "b": "two"}'
    unfinished = parse(START + "[f(a=", finish=False)
    assert unfinished["tool_calls"][0]["arguments"] == '{"a": '
    whole = view(events_of(Lfm2Parser, text))
    for pieces in splits(text):
        assert view(events_of(Lfm2Parser, text, pieces=pieces)) == whole


def test_truncated_call_is_not_a_call_that_runs() -> None:
    (only,) = parse(START + '[f(a="unfinished')["tool_calls"]
    assert only["name"] == "f" and "cut off" in only["error"]


def test_positional_arguments_and_junk_are_calls_with_errors() -> None:
    (positional,) = parse(START + "[f(1, 2)]" + END)["tool_calls"]
    assert positional["name"] == "f" and "could not read" in positional["error"]
    message = parse(START + "not a call" + END + "text")
    assert "could not read" in message["tool_calls"][0]["error"]
    assert message["content"] == "text"


def test_brackets_in_prose_are_text() -> None:
    text = "Use [link](url) and f(a=1) freely."
    assert parse(text) == {"content": text, "reasoning_content": "", "tool_calls": []}


def test_reasoning_before_calls() -> None:
    message = parse("<think>plan</think>" + START + "[f()]" + END, reasoning_format="auto")
    assert message["reasoning_content"] == "plan"
    assert message["tool_calls"] == [{"name": "f", "arguments": {}}]


def test_json_calls_in_the_list_as_llamacpp_reads_lfm2_json_tools() -> None:
    """The rows of llama.cpp's own `lfm2_json_tools` cases (LFM2 told to write JSON calls),
    read by the same parser."""
    rows = [json.loads(line) for line in (CORPUS / "cases.jsonl").read_text().splitlines()]
    rows = [r for r in rows if r["format"] == "lfm2_json_tools"]
    assert len(rows) == 8
    for row in rows:
        for pieces in ([row["raw"]], list(row["raw"])):
            message = parse(row["raw"], pieces)
            assert message["content"] == row["expected"]["content"]
            assert [(c["name"], c["arguments"]) for c in message["tool_calls"]] == [
                (c["name"], c["arguments"]) for c in row["expected"]["tool_calls"]
            ]
