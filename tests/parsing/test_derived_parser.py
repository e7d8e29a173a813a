"""The derived parser on output in invented formats (tests/parsing/derived_templates).

Each format is one of the three shapes; the cases are the edge cases the issue lists: a
marker inside a JSON string, output cut off mid-call, several calls in order, whitespace
kept in values, unicode and nested values, values typed by the tool's schema, and streaming
(any split gives the same result; garbage never raises).
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from tests.support import derived_templates as t

from farmhand.messages import StreamEvent, ToolCallDelta
from farmhand.parsing.base import ParsedMessage, ParserOptions
from farmhand.parsing.registry import parser_for, prefill_of

SCHEMAS: dict[str, dict[str, Any]] = {
    "get_time": {"type": "object", "properties": {"city": {"type": "string"}}},
    "add": {
        "type": "object",
        "properties": {
            "a": {"type": "integer"},
            "b": {"type": "number"},
            "label": {"type": "string"},
            "opts": {"type": "object"},
        },
    },
}


def _events(template: str, text: str, chunk: int | None = None) -> list[StreamEvent]:
    options = ParserOptions(tool_schemas=SCHEMAS)
    parser = parser_for(template, None, None, family="auto", options=options)
    size = chunk or max(1, len(text))
    events: list[StreamEvent] = []
    for start in range(0, len(text), size):
        events += parser.feed(text[start : start + size])
    return events + parser.finish()


def _parse(template: str, text: str, chunk: int | None = None) -> ParsedMessage:
    return ParsedMessage.from_events(_events(template, text, chunk))


def _calls(message: ParsedMessage) -> list[tuple[str, Any]]:
    return [(c.name, c.arguments) for c in message.tool_calls]


def test_tag_per_argument_with_reasoning_and_text() -> None:
    text = (
        "<|thought|>which city?<|/thought|>Checking."
        '<calls><invoke tool="get_time"><arg key="city">Paris</arg></invoke></calls>'
    )
    message = _parse(t.PER_ARG, text)
    assert (message.reasoning_content, message.content) == ("which city?", "Checking.")
    assert _calls(message) == [("get_time", {"city": "Paris"})]


def test_values_are_typed_by_the_schema_and_whitespace_is_kept() -> None:
    text = (
        '<calls><invoke tool="add"><arg key="a">5</arg><arg key="b">2.5</arg>'
        '<arg key="label">  two\n lines  </arg><arg key="opts">{"deep": [1, {"é": "ü"}]}</arg>'
        '<arg key="extra">7</arg></invoke></calls>'
    )
    assert _calls(_parse(t.PER_ARG, text)) == [
        (
            "add",
            {
                "a": 5,
                "b": 2.5,
                "label": "  two\n lines  ",
                "opts": {"deep": [1, {"é": "ü"}]},
                "extra": 7,  # no schema for it: JSON if it reads as JSON
            },
        )
    ]
    # A string parameter keeps "5" a string.
    string = '<calls><invoke tool="get_time"><arg key="city">5</arg></invoke></calls>'
    assert _calls(_parse(t.PER_ARG, string)) == [("get_time", {"city": "5"})]


def test_several_calls_in_order_in_every_shape() -> None:
    per_arg = (
        '<calls><invoke tool="get_time"><arg key="city">Oslo</arg></invoke>'
        '<invoke tool="add"><arg key="a">1</arg></invoke></calls>'
    )
    tag_json = (
        '<|fn|>get_time<|fn_args|>{"city": "Oslo"}<|fn_end|><|fn|>add<|fn_args|>{"a": 1}<|fn_end|>'
    )
    json_call = (
        '<|calls|>[{"tool": "get_time", "input": {"city": "Oslo"}},'
        ' {"tool": "add", "input": {"a": 1}}]<|/calls|>'
    )
    for template, text in ((t.PER_ARG, per_arg), (t.TAG_JSON, tag_json), (t.JSON_CALL, json_call)):
        message = _parse(template, "Two calls: " + text + " done")
        assert _calls(message) == [("get_time", {"city": "Oslo"}), ("add", {"a": 1})]
        assert message.content.split() == ["Two", "calls:", "done"]


def test_a_marker_inside_a_json_string_does_not_end_the_call() -> None:
    tag_json = '<|fn|>get_time<|fn_args|>{"city": "<|fn_end|> not the end"}<|fn_end|>'
    assert _calls(_parse(t.TAG_JSON, tag_json)) == [
        ("get_time", {"city": "<|fn_end|> not the end"})
    ]
    json_call = '<|calls|>[{"tool": "get_time", "input": {"city": "]<|/calls|>"}}]<|/calls|>'
    assert _calls(_parse(t.JSON_CALL, json_call)) == [("get_time", {"city": "]<|/calls|>"})]


def test_output_cut_off_mid_call_is_never_a_call_that_runs() -> None:
    cut = {
        t.PER_ARG: '<calls><invoke tool="add"><arg key="a">5</arg><arg key="b">2',
        t.TAG_JSON: '<|fn|>add<|fn_args|>{"a": 5, "b"',
        t.JSON_CALL: '<|calls|>[{"tool": "add", "input": {"a": 5',
    }
    for template, text in cut.items():
        for chunk in (None, 1):
            (call,) = _parse(template, text, chunk).tool_calls
            assert call.name == "add"
            assert call.parse_error and "cut off" in call.parse_error


def test_an_opener_that_is_not_one_stays_text() -> None:
    # `<calls>` opens calls only with `<invoke tool="` after it.
    text = "Use <calls> and <invoke> wisely."
    message = _parse(t.PER_ARG, text)
    assert (message.content, message.tool_calls) == (text, [])
    # A whole opener is a call the model meant: unreadable, it comes back with an error.
    message = _parse(t.TAG_JSON, "Use <|fn|> wisely.")
    assert message.content == "Use "
    (call,) = message.tool_calls
    assert call.parse_error


def test_arguments_stream_as_deltas_after_the_name() -> None:
    text = '<|fn|>add<|fn_args|>{"a": 1, "label": "x"}<|fn_end|>'
    deltas = [e for e in _events(t.TAG_JSON, text, chunk=1) if isinstance(e, ToolCallDelta)]
    assert deltas[0].name == "add" and deltas[0].index == 0
    assert len(deltas) > 3  # the arguments come in pieces as they are written
    assert json.loads("".join(d.arguments for d in deltas)) == {"a": 1, "label": "x"}
    per_arg = '<calls><invoke tool="add"><arg key="a">1</arg><arg key="label">x</arg></invoke>'
    deltas = [e for e in _events(t.PER_ARG, per_arg, chunk=1) if isinstance(e, ToolCallDelta)]
    assert deltas[0].name == "add"
    assert "".join(d.arguments for d in deltas) == '{"a":1,"label":"x"'


def test_only_the_first_call_without_parallel_calls() -> None:
    text = '<|fn|>add<|fn_args|>{"a": 1}<|fn_end|><|fn|>add<|fn_args|>{"a": 2}<|fn_end|>'
    options = ParserOptions(parallel_tool_calls=False)
    parser = parser_for(t.TAG_JSON, None, None, family="auto", options=options)
    message = ParsedMessage.from_events(parser.feed(text) + parser.finish())
    assert _calls(message) == [("add", {"a": 1})]


def test_the_prompt_tail_after_the_derived_header_is_the_reply_start() -> None:
    prompt = "<|user|>hi<|end|><|assistant|><|thought|>"
    assert prefill_of("auto", prompt, t.PER_ARG) == "<|thought|>"
    assert prefill_of("auto", prompt) == ""  # no template: nothing to derive a header from


def test_auto_without_a_template_is_the_generic_parser() -> None:
    parser = parser_for(None, None, None, family="auto")
    assert type(parser).__name__ == "GenericParser"


_OUTPUTS = {
    t.PER_ARG: '<|thought|>hm<|/thought|>ok <calls><invoke tool="add"><arg key="a">1</arg>'
    '<arg key="label"> a <b> </arg></invoke><invoke tool="get_time"></invoke></calls> end',
    t.TAG_JSON: 'ok <|fn|>add<|fn_args|>{"a": 1, "s": "<|fn_end|>"}<|fn_end|> <|fn|>x end',
    t.JSON_CALL: 'ok <|calls|>[{"tool": "add", "input": {"a": [1, {"b": "]"}]}}, 3]<|/calls|>',
}


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_any_split_gives_the_same_result(data: st.DataObject) -> None:
    template = data.draw(st.sampled_from(list(_OUTPUTS)))
    text = _OUTPUTS[template]
    cuts = sorted(data.draw(st.sets(st.integers(1, len(text) - 1), max_size=8)))
    pieces = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]
    options = ParserOptions(tool_schemas=SCHEMAS)
    parser = parser_for(template, None, None, family="auto", options=options)
    events: list[StreamEvent] = []
    for piece in pieces:
        events += parser.feed(piece)
    split = ParsedMessage.from_events(events + parser.finish()).to_json()
    assert split == _parse(template, text).to_json()


_MARKUP = st.sampled_from(
    ["<calls>", "</calls>", '<invoke tool="', '">', '<arg key="', "</arg>", "</invoke>",
     "<|fn|>", "<|fn_args|>", "<|fn_end|>", "<|calls|>", "<|/calls|>", "[", "]", "{", "}",
     '"', ",", ":", "<|thought|>", "<|/thought|>", "\n", " ", "x", "add", "1"]
)  # fmt: skip


@settings(max_examples=150, deadline=None)
@given(
    template=st.sampled_from(list(_OUTPUTS)),
    pieces=st.lists(st.one_of(_MARKUP, st.text(max_size=4)), max_size=30),
    chunk=st.integers(1, 7),
)
def test_garbage_never_raises(template: str, pieces: list[str], chunk: int) -> None:
    message = _parse(template, "".join(pieces), chunk)
    for call in message.tool_calls:
        assert isinstance(call.arguments, dict)
