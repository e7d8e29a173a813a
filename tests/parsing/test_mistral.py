"""The Mistral parsers: Mistral Nemo's `[TOOL_CALLS][{"name", "arguments", "id"}, ...]`, and
Magistral's (Mistral Small 3.2, Ministral 3, Devstral) `[TOOL_CALLS]NAME[CALL_ID]ID[ARGS]{...}`
per call with `[THINK]...[/THINK]` reasoning (format: mistralai/Mistral-Small-3.2-24B-Instruct-2506
and Ministral-3 chat templates)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.parsing.helpers import (
    arguments,
    arguments_text,
    call_json,
    calls_of,
    check_arguments_are_json,
    deltas_of,
    events_of,
    message_of,
    names,
    prose,
    split_at,
    splits,
    text_of,
    view,
)

from farmhand.messages import StreamEvent, ToolCallDelta
from farmhand.parsing.mistral import MagistralParser, MistralNemoParser


def parse(text: str, **kwargs: Any) -> list[StreamEvent]:
    return events_of(MistralNemoParser, text, **kwargs)


A = call_json("get_weather", {"city": "Paris"}, "a1b2c3d4e")
B = call_json("search", {"q": "rain"}, "Z9Y8X7W6V")


def test_plain_text_is_text_and_streams() -> None:
    parser = MistralNemoParser()
    assert (
        text_of(parser.feed("Lists look like [1, 2] in JSON")) == "Lists look like [1, 2] in JSON"
    )
    # "[TOOL" may still become the marker: held until it cannot.
    assert text_of(parser.feed(" and [TOOL")) == " and "
    assert text_of(parser.feed("S] too")) == "[TOOLS] too"
    assert parser.finish() == []


@pytest.mark.parametrize("step", [0, 1, 7])
def test_one_call_keeps_its_id(step: int) -> None:
    events = parse(f"[TOOL_CALLS][{A}]", step=step)
    [c] = calls_of(events)
    assert (c.name, c.arguments, c.id, c.parse_error) == (
        "get_weather",
        {"city": "Paris"},
        "a1b2c3d4e",
        None,
    )
    assert text_of(events) == ""


def test_several_calls_each_keep_their_id() -> None:
    events = parse(f"[TOOL_CALLS][{A}, {B}]")
    assert [(c.name, c.id) for c in calls_of(events)] == [
        ("get_weather", "a1b2c3d4e"),
        ("search", "Z9Y8X7W6V"),
    ]


def test_a_call_without_an_id_gets_one() -> None:
    [c] = calls_of(parse('[TOOL_CALLS][{"name": "f", "arguments": {}}]'))
    assert c.id.startswith("call_")


def test_text_before_the_marker_and_after_the_array_is_text() -> None:
    events = parse(f"Let me check.\n[TOOL_CALLS] [{A}]\n\nOK")
    assert text_of(events) == "Let me check.\nOK"
    assert len(calls_of(events)) == 1


def test_objects_without_the_brackets_are_calls_too() -> None:
    events = parse(f"[TOOL_CALLS]{A}, {B}")
    assert [c.name for c in calls_of(events)] == ["get_weather", "search"]


def test_a_call_streams_its_name_then_its_arguments() -> None:
    parser = MistralNemoParser()
    events = parser.feed('[TOOL_CALLS][{"name": "f", "arguments": {"path": "/tm')
    assert deltas_of(events)[0].name == "f"
    assert arguments_text(events) == '{"path":"/tm'
    assert calls_of(events) == []


@pytest.mark.parametrize(
    ("after", "fragment"),
    [
        ("garbage", "garbage"),  # v11's head, NAME{...}, that the output ended in
        ('[{"name": "f", "arguments": {"a": }}]', "could not read"),
        ('[{"name": "f", "arguments": "{not json"}]', "not valid JSON"),
        ('["f"]', "'\"f\"]'"),
    ],
)
def test_what_follows_the_marker_that_is_not_calls_is_a_parse_error(
    after: str, fragment: str
) -> None:
    [c] = calls_of(parse(f"[TOOL_CALLS]{after}"))
    assert c.arguments == {}
    assert c.parse_error is not None and fragment in c.parse_error


def test_a_call_cut_off_at_the_end_is_a_parse_error_and_earlier_calls_stand() -> None:
    first, second = calls_of(parse(f"[TOOL_CALLS][{A}, {B[:30]}"))
    assert first.parse_error is None
    assert second.parse_error is not None and "cut off" in second.parse_error


def test_marked_calls_are_calls_whatever_their_name() -> None:
    other = call_json("other", {}, "abcDEF123")
    [c] = calls_of(parse(f"[TOOL_CALLS][{other}]", known={"get_weather"}))
    assert c.name == "other"


def test_parallel_off_keeps_the_first_call_only() -> None:
    events = parse(f"[TOOL_CALLS][{A}, {B}]", parallel_tool_calls=False)
    assert [c.name for c in calls_of(events)] == ["get_weather"]
    assert text_of(events) == ""


ids = st.text(st.sampled_from("abcXYZ0123456789"), min_size=9, max_size=9)
calls = st.builds(call_json, names, arguments, ids)
arrays = st.lists(calls, max_size=3).map(lambda cs: "[TOOL_CALLS][" + ", ".join(cs) + "]")
plain = prose("[")
outputs = st.lists(
    plain | arrays | st.sampled_from(["[TOOL_CALLS]", "[TOOL", "[", "]", "{", ",", " "]),
    max_size=6,
).map("".join)


@settings(max_examples=200, deadline=None)
@given(text=outputs, cuts=st.lists(st.integers(0, 400), max_size=5))
def test_any_split_parses_like_the_whole(text: str, cuts: list[int]) -> None:
    whole = view(parse(text, reasoning_format="none"))
    # (A call written without an id gets a fresh one, which the parsed view leaves out.)
    assert view(parse(text, pieces=split_at(text, cuts), reasoning_format="none")) == whole
    assert view(parse(text, step=1, reasoning_format="none")) == whole


@settings(max_examples=150, deadline=None)
@given(before=plain, written=st.lists(st.tuples(names, arguments, ids), min_size=1, max_size=3))
def test_calls_after_text_are_read_back(
    before: str, written: list[tuple[str, dict[str, Any], str]]
) -> None:
    text = before + "[TOOL_CALLS][" + ", ".join(call_json(n, a, i) for n, a, i in written) + "]"
    got = view(parse(text, step=2, reasoning_format="none"))
    assert [(n, a, i) for n, a, i, _ in got["calls"]] == written
    assert got["content"] == before


@settings(max_examples=200, deadline=None)
@given(text=st.text(max_size=300) | outputs)
def test_garbage_never_raises(text: str) -> None:
    check_arguments_are_json(parse(text))


# Magistral.


def parse_magistral(text: str, pieces: list[str] | None = None, **options: Any) -> dict[str, Any]:
    return message_of(MagistralParser, text, pieces, **options)


def test_magistral_calls_with_and_without_ids_in_order() -> None:
    text = 'Hi[TOOL_CALLS]a[ARGS]{"x": 1}[TOOL_CALLS]b[CALL_ID]000000002[ARGS]{}'
    message = parse_magistral(text)
    assert message["content"] == "Hi"
    assert message["tool_calls"] == [
        {"name": "a", "arguments": {"x": 1}},
        {"name": "b", "arguments": {}, "id": "000000002"},
    ]


def test_magistral_a_marker_inside_a_string_does_not_end_the_call() -> None:
    value = 'x"}[TOOL_CALLS]g[ARGS]{"  '
    text = "[TOOL_CALLS]f[ARGS]" + json.dumps({"s": value, "n": {"deep": ["é", 1]}})
    assert parse_magistral(text)["tool_calls"] == [
        {"name": "f", "arguments": {"s": value, "n": {"deep": ["é", 1]}}}
    ]


def test_magistral_reasoning_is_split_and_may_mention_calls() -> None:
    text = '[THINK]maybe [TOOL_CALLS]f[ARGS]{}[/THINK][TOOL_CALLS]f[ARGS]{"a": 1}'
    message = parse_magistral(text, reasoning_format="auto")
    assert message["reasoning_content"] == "maybe [TOOL_CALLS]f[ARGS]{}"
    assert message["tool_calls"] == [{"name": "f", "arguments": {"a": 1}}]


def test_magistral_arguments_stream_and_every_split_agrees() -> None:
    text = 'ok[TOOL_CALLS]f[ARGS]{"a": [1, 2], "b": "c d"}'
    events = events_of(MagistralParser, text, step=1)
    assert any(
        isinstance(e, ToolCallDelta) and (e.index, e.name) == (0, "f") and e.id for e in events
    )
    assert arguments_text(events) == '{"a":[1,2],"b":"c d"}'
    whole = view(events_of(MagistralParser, text))
    for pieces in splits(text):
        assert view(events_of(MagistralParser, text, pieces=pieces)) == whole


def test_magistral_truncated_and_broken_calls_do_not_run() -> None:
    (cut,) = parse_magistral('[TOOL_CALLS]f[ARGS]{"a": "unfinish')["tool_calls"]
    assert cut["name"] == "f" and "cut off" in cut["error"]
    (broken,) = parse_magistral("[TOOL_CALLS]f[ARGS]not json")["tool_calls"]
    assert broken["name"] == "f" and "could not read" in broken["error"]
