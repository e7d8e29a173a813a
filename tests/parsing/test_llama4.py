"""The Llama 4 pythonic parser: a reply that opens with `[f(a=1), g(b="x")]` is calls (bare,
or between `<|python_start|>` and `<|python_end|>`); any other reply is text. Cases written
from Meta's Llama 4 prompt format (llama.com model cards, "Llama 4 ... pythonic" tool calls:
`[func_name1(params_name1=params_value1, ...), func_name2(params)]`)."""

from __future__ import annotations

import warnings

from tests.parsing.helpers import events_of, message_of, splits, view

from farmhand.parsing.llama4 import Llama4Parser
from farmhand.parsing.registry import detect_family


def test_bare_list_at_the_start_is_calls_in_order() -> None:
    text = "  [get_weather(city=\"Paris\", days=2), get_time(tz='CET')]"
    assert message_of(Llama4Parser, text)["tool_calls"] == [
        {"name": "get_weather", "arguments": {"city": "Paris", "days": 2}},
        {"name": "get_time", "arguments": {"tz": "CET"}},
    ]


def test_a_reply_that_starts_otherwise_is_text() -> None:
    for text in ("[1, 2] are numbers", "[link](url) f(a=1)", "Sure: [f(a=1)]", "[ ]"):
        assert message_of(Llama4Parser, text) == {
            "content": text,
            "reasoning_content": "",
            "tool_calls": [],
        }


def test_python_tags_and_markers_inside_strings() -> None:
    text = '<|python_start|>[f(s="a)], <|python_end|>")]<|python_end|>'
    assert message_of(Llama4Parser, text)["tool_calls"] == [
        {"name": "f", "arguments": {"s": "a)], <|python_end|>"}}
    ]


def test_an_odd_escape_in_a_string_is_read_without_a_warning() -> None:
    # Python warns about `\ ` in a literal; a model's text must not print that on the server.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        calls = message_of(Llama4Parser, r'[f(path="C:\ my files")]')["tool_calls"]
    assert calls == [{"name": "f", "arguments": {"path": "C:\\ my files"}}]


def test_every_split_agrees_and_truncation_does_not_run() -> None:
    text = '[f(a=1, b="x y"), g()]'
    whole = view(events_of(Llama4Parser, text))
    for pieces in splits(text):
        assert view(events_of(Llama4Parser, text, pieces=pieces)) == whole
    (cut,) = message_of(Llama4Parser, '[f(a="x')["tool_calls"]
    assert "cut off" in cut["error"]


def test_detection() -> None:
    assert detect_family("{{ '<|header_start|>assistant<|header_end|>' }}") == "llama4_pythonic"
    assert detect_family(None, "meta-llama/Llama-4-Scout-17B-16E-Instruct") == "llama4_pythonic"
