"""The Firefunction v2 parser: ` functools[{"name": ..., "arguments": {...}}, ...]`."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.parsing.helpers import (
    arguments,
    call_json,
    calls_of,
    check_arguments_are_json,
    deltas_of,
    events_of,
    names,
    prose,
    split_at,
    text_of,
    view,
)

from farmhand.messages import StreamEvent
from farmhand.parsing.firefunction import FirefunctionV2Parser


def parse(text: str, **kwargs: Any) -> list[StreamEvent]:
    return events_of(FirefunctionV2Parser, text, **kwargs)


A = call_json("get_weather", {"city": "Paris"})
B = call_json("search", {"q": "rain"})


def test_plain_text_is_text_and_streams() -> None:
    parser = FirefunctionV2Parser()
    assert text_of(parser.feed("Use functools.partial for that.")) == (
        "Use functools.partial for that."
    )
    assert parser.finish() == []


@pytest.mark.parametrize("step", [0, 1, 6])
@pytest.mark.parametrize("marker", [" functools[", "functools["])
def test_one_call(step: int, marker: str) -> None:
    events = parse(f"{marker}{A}]", step=step)
    assert [(c.name, c.arguments) for c in calls_of(events)] == [("get_weather", {"city": "Paris"})]
    assert text_of(events) == ""


def test_several_calls_in_the_array() -> None:
    events = parse(f" functools[{A}, {B}]")
    assert [c.name for c in calls_of(events)] == ["get_weather", "search"]


def test_text_before_the_marker_and_after_the_array_is_text() -> None:
    events = parse(f"I'll look both up. functools[{A},\n {B}]\nThanks")
    assert text_of(events) == "I'll look both up.Thanks"
    assert len(calls_of(events)) == 2


def test_each_call_is_emitted_as_soon_as_it_closes() -> None:
    parser = FirefunctionV2Parser()
    events = parser.feed(f" functools[{A}, {B[:20]}")
    assert [c.name for c in calls_of(events)] == ["get_weather"]
    assert [d.name for d in deltas_of(events) if d.name] == ["get_weather", "search"]


def test_an_element_that_is_not_a_call_is_a_parse_error() -> None:
    events = parse(f' functools[{A}, {{"tool": "x"}}]')
    first, second = calls_of(events)
    assert first.parse_error is None
    assert second.parse_error is not None and '"tool"' in second.parse_error


def test_an_array_that_stops_being_one_is_a_parse_error_and_text_resumes_after_it() -> None:
    events = parse(f" functools[{A}, 42, [1]] Done")
    first, second = calls_of(events)
    assert first.name == "get_weather"
    assert second.parse_error is not None and "42" in second.parse_error
    assert text_of(events) == "Done"


def test_bad_json_in_a_call_is_a_parse_error() -> None:
    [bad] = calls_of(parse(' functools[{"name": "f", "arguments": {"a": nope}}]'))
    assert bad.name == "f" and bad.parse_error is not None


def test_a_call_cut_off_at_the_end_is_a_parse_error_and_earlier_calls_stand() -> None:
    events = parse(f" functools[{A}, {B[:25]}")
    first, second = calls_of(events)
    assert first.parse_error is None
    assert second.name == "search"
    assert second.parse_error is not None and "cut off" in second.parse_error


def test_an_empty_array_is_no_call() -> None:
    events = parse("Nothing to do. functools[]")
    assert calls_of(events) == [] and text_of(events) == "Nothing to do."


def test_marked_calls_are_calls_whatever_their_name() -> None:
    [c] = calls_of(parse(f" functools[{call_json('other', {})}]", known={"get_weather"}))
    assert c.name == "other"


def test_parallel_off_keeps_the_first_call_only() -> None:
    events = parse(f" functools[{A}, {B}]", parallel_tool_calls=False)
    assert [c.name for c in calls_of(events)] == ["get_weather"]
    assert text_of(events) == ""


arrays = st.lists(st.builds(call_json, names, arguments), max_size=3).map(
    lambda cs: " functools[" + ", ".join(cs) + "]"
)
plain = prose("f[]")
outputs = st.lists(
    plain | arrays | st.sampled_from(["functools", " functools[", "[", "]", "{", ",", " "]),
    max_size=6,
).map("".join)


@settings(max_examples=200, deadline=None)
@given(text=outputs, cuts=st.lists(st.integers(0, 400), max_size=5))
def test_any_split_parses_like_the_whole(text: str, cuts: list[int]) -> None:
    whole = view(parse(text, reasoning_format="none"))
    assert view(parse(text, pieces=split_at(text, cuts), reasoning_format="none")) == whole
    assert view(parse(text, step=1, reasoning_format="none")) == whole


@settings(max_examples=150, deadline=None)
@given(before=plain, calls=st.lists(st.tuples(names, arguments), min_size=1, max_size=3))
def test_calls_after_text_are_read_back(
    before: str, calls: list[tuple[str, dict[str, Any]]]
) -> None:
    text = before + " functools[" + ", ".join(call_json(n, a) for n, a in calls) + "]"
    got = view(parse(text, step=2, reasoning_format="none"))
    assert [(n, a) for n, a, _, _ in got["calls"]] == calls
    assert got["content"] == before


@settings(max_examples=200, deadline=None)
@given(text=st.text(max_size=300) | outputs)
def test_garbage_never_raises(text: str) -> None:
    check_arguments_are_json(parse(text))
