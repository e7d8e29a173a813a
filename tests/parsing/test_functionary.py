"""The Functionary parsers: v3.1's `<function=f>{...}</function>` and v3.2's `>>>f\\n{...}`."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.parsing.helpers import (
    arguments,
    arguments_text,
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
from farmhand.parsing.base import FamilyParser
from farmhand.parsing.functionary import FunctionaryV31Parser, FunctionaryV32Parser


def v31(text: str, **kwargs: Any) -> list[StreamEvent]:
    return events_of(FunctionaryV31Parser, text, **kwargs)


def v32(text: str, **kwargs: Any) -> list[StreamEvent]:
    return events_of(FunctionaryV32Parser, text, **kwargs)


# v3.1


def test_v31_plain_text_is_text() -> None:
    parser = FunctionaryV31Parser()
    assert text_of(parser.feed("No tools needed: 2 < 3.")) == "No tools needed: 2 < 3."
    assert parser.finish() == []


@pytest.mark.parametrize("step", [0, 1, 4])
def test_v31_one_call(step: int) -> None:
    events = v31('<function=get_weather>{"city": "Paris"}</function>', step=step)
    [call] = calls_of(events)
    assert (call.name, call.arguments, call.parse_error) == ("get_weather", {"city": "Paris"}, None)
    assert text_of(events) == ""


def test_v31_several_calls_with_text_around() -> None:
    text = 'Checking both.\n<function=a>{"x": 1}</function>\n<function=b>{}</function>\nDone.'
    events = v31(text)
    assert [(c.name, c.arguments) for c in calls_of(events)] == [("a", {"x": 1}), ("b", {})]
    assert text_of(events) == "Checking both.\nDone."


def test_v31_a_call_is_complete_when_its_json_closes() -> None:
    parser = FunctionaryV31Parser()
    events = parser.feed('<function=f>{"arg1": 1}<')
    assert [(c.name, c.arguments) for c in calls_of(events)] == [("f", {"arg1": 1})]
    assert text_of(events) == ""
    assert parser.feed("/function>") == []


def test_v31_arguments_stream_while_written() -> None:
    parser = FunctionaryV31Parser()
    events = parser.feed('<function=f>{"path": "/tm')
    assert [d.name for d in deltas_of(events) if d.name] == ["f"]
    assert arguments_text(events) == '{"path":"/tm'


@pytest.mark.parametrize(
    ("body", "fragment"),
    [
        ("not json", "'not json'"),
        ('{"a": 1', "before </function>"),  # the tag closed inside the JSON
        ('{"a": }', "not valid JSON"),
        ("[1, 2]", "must be a JSON object"),
    ],
)
def test_v31_a_body_that_is_not_arguments_is_a_parse_error(body: str, fragment: str) -> None:
    events = v31(f"<function=f>{body}</function> after")
    [call] = calls_of(events)
    assert call.name == "f" and call.arguments == {}
    assert call.parse_error is not None and fragment in call.parse_error
    assert text_of(events) == "after"


def test_v31_a_call_cut_off_is_a_parse_error() -> None:
    [call] = calls_of(v31('<function=f>{"a": [1, 2'))
    assert call.parse_error is not None and "cut off" in call.parse_error


def test_v31_function_text_without_a_name_stays_text() -> None:
    text = "Write <function=\nfoo> or <function=> in HTML"
    assert text_of(v31(text)) == text
    assert calls_of(v31(text)) == []


def test_v31_python_tag_is_code_for_python_to_the_end() -> None:
    code = "import os\nprint(os.getcwd())"
    events = v31(f"Let me run this.<|python_tag|>{code}")
    [call] = calls_of(events)
    assert (call.name, call.arguments) == ("python", {"code": code})
    assert text_of(events) == "Let me run this."


def test_v31_partial_code_streams_as_llama_cpp_shows_it() -> None:
    parser = FunctionaryV31Parser()
    events = parser.feed("<|python_tag|>print('a')\n")
    assert arguments_text(events) == '{"code":"print(\'a\')\\n'


def test_v31_marked_calls_are_calls_whatever_their_name() -> None:
    [call] = calls_of(v31("<function=other>{}</function>", known={"f"}))
    assert call.name == "other"  # the loop tells the model it is not a tool


def test_v31_parallel_off_keeps_the_first_call_only() -> None:
    events = v31("<function=a>{}</function><function=b>{}</function>", parallel_tool_calls=False)
    assert [c.name for c in calls_of(events)] == ["a"]
    assert text_of(events) == ""


# v3.2


@pytest.mark.parametrize("start", ["", ">>>"])
def test_v32_all_is_text(start: str) -> None:
    events = v32(f"{start}all\nHello, world!\nWhat's up?")
    assert text_of(events) == "Hello, world!\nWhat's up?"
    assert calls_of(events) == []


@pytest.mark.parametrize("start", ["", ">>>"])
@pytest.mark.parametrize("step", [0, 1])
def test_v32_one_call(start: str, step: int) -> None:
    events = v32(f'{start}get_weather\n{{"city": "Paris"}}\n', step=step)
    assert [(c.name, c.arguments) for c in calls_of(events)] == [("get_weather", {"city": "Paris"})]
    assert text_of(events) == ""


def test_v32_text_then_several_calls() -> None:
    text = '>>>all\nLet me check.>>>a\n{"x": 1}\n>>>b\n{"y": [2]}'
    events = v32(text)
    assert text_of(events) == "Let me check."
    assert [(c.name, c.arguments) for c in calls_of(events)] == [("a", {"x": 1}), ("b", {"y": [2]})]


def test_v32_text_after_a_call() -> None:
    events = v32(">>>f\n{}\n>>>all\nDone.")
    assert [c.name for c in calls_of(events)] == ["f"]
    assert text_of(events) == "Done."


def test_v32_python_with_code_is_a_code_call() -> None:
    code = "# a program\nprint('hey')"
    [call] = calls_of(v32(f">>>python\n{code}"))
    assert (call.name, call.arguments) == ("python", {"code": code})


def test_v32_python_with_json_is_a_json_call() -> None:
    [call] = calls_of(v32('>>>python\n{"code": "print(1)"}'))
    assert (call.name, call.arguments) == ("python", {"code": "print(1)"})


def test_v32_partial_code_streams_as_partial_arguments() -> None:
    parser = FunctionaryV32Parser()
    events = parser.feed("python\n# This is a program:\nprint('hey')")
    assert arguments_text(events) == '{"code":"# This is a program:\\nprint(\'hey\')'
    assert calls_of(events) == []


@pytest.mark.parametrize(
    "text",
    [
        "Hello there",
        "all\nIn a REPL:\n>>> print(1)\n1",
        "all\nquote:\n>>>x y",
        "Sure\nI can help.",
    ],
)
def test_v32_text_that_only_looks_like_a_recipient_stays_text(text: str) -> None:
    events = v32(text)
    assert calls_of(events) == []
    assert text_of(events) == text.removeprefix("all\n")


def test_v32_at_the_start_without_the_marker_only_offered_tools_are_called() -> None:
    assert calls_of(v32('note\n{"a": 1}', known={"f"})) == []
    assert text_of(v32('note\n{"a": 1}', known={"f"})) == 'note\n{"a": 1}'
    assert [c.name for c in calls_of(v32('f\n{"a": 1}', known={"f"}))] == ["f"]


def test_v32_an_offered_tool_without_json_is_a_parse_error() -> None:
    events = v32(">>>f\nplease run\n>>>all\nok", known={"f"})
    [call] = calls_of(events)
    assert call.name == "f"
    assert call.parse_error is not None and "please run" in call.parse_error
    assert text_of(events) == "ok"


def test_v32_bad_json_is_a_parse_error() -> None:
    [call] = calls_of(v32('>>>f\n{"a": nope}'))
    assert call.name == "f" and call.parse_error is not None


def test_v32_a_call_cut_off_is_a_parse_error() -> None:
    [call] = calls_of(v32('>>>f\n{"a": "unfinish'))
    assert call.parse_error is not None and "cut off" in call.parse_error


def test_v32_parallel_off_keeps_the_first_call_only() -> None:
    events = v32(">>>a\n{}\n>>>b\n{}", parallel_tool_calls=False)
    assert [c.name for c in calls_of(events)] == ["a"]
    assert text_of(events) == ""


# Properties.

arguments_json = arguments.map(json.dumps)
plain = prose("<>")
v31_calls = st.builds(lambda n, a: f"<function={n}>{a}</function>", names, arguments_json)
v31_outputs = st.lists(
    plain
    | v31_calls
    | st.sampled_from(["<function=", "</function>", "<|python_tag|>", "<", "{", "\n"]),
    max_size=8,
).map("".join)
v32_calls = st.builds(lambda n, a: f">>>{n}\n{a}", names, arguments_json)
v32_outputs = st.lists(
    plain
    | v32_calls
    | st.sampled_from([">>>all\n", ">>>python\n", "all\n", ">>>", ">", "{", "\n", "f\n{"]),
    max_size=8,
).map("".join)


def _split_parse(cls: type[FamilyParser], text: str, cuts: list[int]) -> dict[str, Any]:
    return view(events_of(cls, text, pieces=split_at(text, cuts), reasoning_format="none"))


@settings(max_examples=200, deadline=None)
@given(text=v31_outputs, cuts=st.lists(st.integers(0, 400), max_size=5))
def test_v31_any_split_parses_like_the_whole(text: str, cuts: list[int]) -> None:
    whole = view(v31(text, reasoning_format="none"))
    assert _split_parse(FunctionaryV31Parser, text, cuts) == whole
    assert view(v31(text, step=1, reasoning_format="none")) == whole


@settings(max_examples=200, deadline=None)
@given(text=v32_outputs, cuts=st.lists(st.integers(0, 400), max_size=5))
def test_v32_any_split_parses_like_the_whole(text: str, cuts: list[int]) -> None:
    whole = view(v32(text, reasoning_format="none"))
    assert _split_parse(FunctionaryV32Parser, text, cuts) == whole
    assert view(v32(text, step=1, reasoning_format="none")) == whole


@settings(max_examples=150, deadline=None)
@given(parts=st.lists(st.tuples(plain, names, arguments_json), max_size=4))
def test_v31_calls_between_prose_are_read_back(parts: list[tuple[str, str, str]]) -> None:
    text = "".join(f"{p}<function={n}>{a}</function>" for p, n, a in parts)
    got = view(v31(text, step=2, reasoning_format="none"))
    assert [(n, a) for n, a, _, _ in got["calls"]] == [(n, json.loads(a)) for _, n, a in parts]
    assert "".join(got["content"].split()) == "".join("".join(p for p, _, _ in parts).split())


@settings(max_examples=150, deadline=None)
@given(parts=st.lists(st.tuples(plain, names, arguments_json), max_size=4))
def test_v32_calls_after_text_are_read_back(parts: list[tuple[str, str, str]]) -> None:
    text = "".join(f">>>all\n{p}>>>{n}\n{a}\n" for p, n, a in parts)
    got = view(v32(text, step=2, reasoning_format="none"))
    assert [(n, a) for n, a, _, _ in got["calls"]] == [(n, json.loads(a)) for _, n, a in parts]
    assert got["content"] == "".join(p for p, _, _ in parts)


@settings(max_examples=200, deadline=None)
@given(text=st.text(max_size=300) | v31_outputs | v32_outputs)
def test_garbage_never_raises(text: str) -> None:
    for cls in (FunctionaryV31Parser, FunctionaryV32Parser):
        check_arguments_are_json(events_of(cls, text, known={"f"}))
