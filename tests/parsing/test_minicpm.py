"""The MiniCPM 5 parser: `<function name="f"><param name="k">v</param></function>`, CDATA
values, values typed by the tool's schema (format: openbmb/MiniCPM5 chat_template.jinja)."""

from __future__ import annotations

from typing import Any

from tests.parsing.helpers import events_of, message_of, splits, view

from farmhand.parsing.minicpm import MiniCpmParser

SCHEMAS = {
    "f": {
        "type": "object",
        "properties": {
            "n": {"type": "integer"},
            "s": {"type": "string"},
            "flags": {"type": "array"},
            "maybe": {"type": ["number", "null"]},
        },
    }
}


def parse(text: str, pieces: list[str] | None = None, **options: Any) -> dict[str, Any]:
    return message_of(MiniCpmParser, text, pieces, **options)


def call(name: str, **params: str) -> str:
    body = "".join(f'<param name="{k}">{v}</param>' for k, v in params.items())
    return f'<function name="{name}">{body}</function>'


def test_values_are_typed_by_the_schema() -> None:
    text = call("f", n="5", s="5", flags="[1, 2]", maybe="null")
    (only,) = parse(text, tool_schemas=SCHEMAS)["tool_calls"]
    assert only["arguments"] == {"n": 5, "s": "5", "flags": [1, 2], "maybe": None}


def test_without_a_schema_values_stay_text() -> None:
    (only,) = parse(call("g", n="5"))["tool_calls"]
    assert only["arguments"] == {"n": "5"}


def test_cdata_keeps_markup_and_whitespace_exactly() -> None:
    value = '  <a href="/x">hi</a> </param></function>\n\t東京 '
    text = f'<function name="html"><param name="m"><![CDATA[{value}]]></param></function>'
    assert parse(text)["tool_calls"] == [{"name": "html", "arguments": {"m": value}}]


def test_several_calls_in_order_with_text_and_reasoning() -> None:
    text = "<think>plan</think>Sure." + call("a", x="1") + "\n" + call("b") + "done"
    message = parse(text, reasoning_format="auto")
    assert message["reasoning_content"] == "plan"
    assert message["content"] == "Sure.done"
    assert [(c["name"], c["arguments"]) for c in message["tool_calls"]] == [
        ("a", {"x": "1"}),
        ("b", {}),
    ]


def test_every_split_agrees() -> None:
    text = "hi " + call("f", n="7", s="a b") + " bye"
    whole = view(events_of(MiniCpmParser, text, tool_schemas=SCHEMAS))
    for pieces in splits(text):
        assert view(events_of(MiniCpmParser, text, pieces=pieces, tool_schemas=SCHEMAS)) == whole


def test_truncated_and_broken_calls_do_not_run() -> None:
    (cut,) = parse('<function name="f"><param name="s">unfinish')["tool_calls"]
    assert cut["name"] == "f" and "cut off" in cut["error"]
    (broken,) = parse('<function name="f">junk</function>after')["tool_calls"]
    assert broken["name"] == "f" and "could not read" in broken["error"]
