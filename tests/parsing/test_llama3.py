"""The Llama 3.x parsers: bare JSON calls, and what follows `<|python_tag|>`."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.parsing.helpers import (
    arguments_text,
    call_json,
    calls_of,
    check_arguments_are_json,
    deltas_of,
    events_of,
    prose,
    split_at,
    text_of,
    view,
)

from farmhand.messages import StreamEvent
from farmhand.parsing.base import ParsedMessage
from farmhand.parsing.llama3 import Llama3BuiltinToolsParser, Llama3Parser

TOOLS = {"weather:get_weather", "search"}
CALL = '{"name": "get_weather", "parameters": {"city": "Paris"}}'


def parse(text: str, *, builtin: bool = False, **kwargs: Any) -> list[StreamEvent]:
    return events_of(Llama3BuiltinToolsParser if builtin else Llama3Parser, text, **kwargs)


def test_plain_text_is_text_and_streams_as_it_comes() -> None:
    parser = Llama3Parser()
    assert text_of(parser.feed("The capital of France")) == "The capital of France"
    # Trailing whitespace waits: a call that follows takes it.
    assert text_of(parser.feed(" is Paris. ")) == " is Paris."
    assert text_of(parser.finish()) == " "


@pytest.mark.parametrize("step", [0, 1, 5])
def test_a_bare_json_reply_is_a_call(step: int) -> None:
    events = parse(CALL, step=step)
    [call] = calls_of(events)
    assert (call.name, call.arguments, call.parse_error) == ("get_weather", {"city": "Paris"}, None)
    assert text_of(events) == ""


@pytest.mark.parametrize(
    "text",
    [
        '{"name": "get_weather", "arguments": {"city": "Paris"}}',
        '{"type": "function", "name": "get_weather", "parameters": {"city": "Paris"}}',
        '\n  {\n "name" : "get_weather" ,\n "parameters" : {"city": "Paris"}\n}\n',
    ],
)
def test_the_variants_models_write_are_calls(text: str) -> None:
    [call] = calls_of(parse(text))
    assert (call.name, call.arguments) == ("get_weather", {"city": "Paris"})


def test_several_calls_separated_by_semicolons_and_newlines() -> None:
    second = '{"name": "search", "parameters": {"q": "rain"}}'
    events = parse(f"{CALL}; {second}\n{CALL}")
    assert [c.name for c in calls_of(events)] == ["get_weather", "search", "get_weather"]
    assert text_of(events) == ""


def test_text_then_a_call_keeps_the_text_and_the_call_takes_the_whitespace() -> None:
    events = parse(f"Let me check.\n\n{CALL}\nDone.")
    assert text_of(events) == "Let me check.Done."
    assert [c.arguments for c in calls_of(events)] == [{"city": "Paris"}]


def test_json_that_is_not_a_call_stays_text_and_is_not_held() -> None:
    parser = Llama3Parser()
    # `{"city"` cannot start a call: released as soon as that is certain.
    assert text_of(parser.feed('Data: {"city')) == 'Data: {"city'
    assert text_of(parser.feed('": 1} and {"name": "Bob", "age": 3}')) == (
        '": 1} and {"name": "Bob", "age": 3}'
    )
    assert calls_of(parser.finish()) == []


def test_a_brace_that_may_open_a_call_is_held_until_it_is_decided() -> None:
    parser = Llama3Parser()
    assert text_of(parser.feed('Sure {"name": "get_w')) == "Sure"
    events = parser.feed('eather", "parameters": {}}')
    assert text_of(events) == ""
    assert [c.name for c in calls_of(events)] == ["get_weather"]


def test_with_known_tools_only_their_names_make_calls() -> None:
    unknown = '{"name": "delete_everything", "parameters": {}}'
    events = parse(f"{unknown} {CALL}", known=TOOLS)
    # get_weather is weather:get_weather without its server prefix: a call.
    assert [c.name for c in calls_of(events)] == ["get_weather"]
    assert text_of(events) == unknown
    # Without a list of tools (how llama.cpp reads), any name is a call.
    assert [c.name for c in calls_of(parse(unknown))] == ["delete_everything"]


def test_broken_json_after_a_call_head_is_a_call_with_a_parse_error() -> None:
    events = parse('{"name": "get_weather", "parameters": {"city": }}')
    [call] = calls_of(events)
    assert call.name == "get_weather" and call.arguments == {}
    assert call.parse_error is not None and "could not read" in call.parse_error
    assert text_of(events) == ""


def test_arguments_that_are_not_an_object_are_a_parse_error() -> None:
    [call] = calls_of(parse('{"name": "get_weather", "parameters": [1, 2]}'))
    assert call.parse_error is not None and "must be a JSON object" in call.parse_error


def test_a_call_cut_off_at_the_end_is_a_call_with_a_parse_error() -> None:
    events = parse('Checking. {"name": "get_weather", "parameters": {"city": "Par')
    [call] = calls_of(events)
    assert call.name == "get_weather"
    assert call.parse_error is not None and "cut off" in call.parse_error
    assert text_of(events) == "Checking."


def test_a_partial_call_streams_its_name_then_its_arguments() -> None:
    parser = Llama3Parser()
    events = parser.feed('{"name": "get_weather", "parameters": {"city": "Pa')
    assert deltas_of(events)[0].name == "get_weather"
    assert arguments_text(events) == '{"city":"Pa'
    assert calls_of(events) == []


def test_parallel_calls_off_keeps_the_first_and_swallows_the_rest() -> None:
    second = '{"name": "search", "parameters": {"q": "rain"}}'
    events = parse(f"{CALL}\n{second}", parallel_tool_calls=False)
    assert [c.name for c in calls_of(events)] == ["get_weather"]
    assert text_of(events) == ""
    assert not [d for d in deltas_of(events) if d.index > 0]


def test_parse_tool_calls_off_leaves_everything_text() -> None:
    events = parse(CALL, parse_tool_calls=False)
    assert calls_of(events) == [] and text_of(events) == CALL


def test_reasoning_before_a_call_is_split_out() -> None:
    message = ParsedMessage.from_events(parse(f"<think>Need weather.</think>{CALL}"))
    assert message.reasoning_content == "Need weather."
    assert [c.name for c in message.tool_calls] == ["get_weather"]


# <|python_tag|>


@pytest.mark.parametrize("builtin", [True, False])
def test_a_json_call_after_the_python_tag_is_a_call_whatever_its_name(builtin: bool) -> None:
    text = 'On it.<|python_tag|>{"name": "anything", "parameters": {"a": 1}}'
    events = parse(text, builtin=builtin, known=TOOLS)
    assert [(c.name, c.arguments) for c in calls_of(events)] == [("anything", {"a": 1})]
    assert text_of(events) == "On it."


@pytest.mark.parametrize("step", [0, 1])
def test_a_builtin_tool_call_reads_its_keyword_arguments(step: int) -> None:
    text = '<|python_tag|>brave_search.call(query="rain (Paris)", count=3, fresh=true, site=None)'
    [call] = calls_of(parse(text, step=step, builtin=True))
    assert call.name == "brave_search"
    assert call.arguments == {"query": "rain (Paris)", "count": 3, "fresh": True, "site": None}
    assert call.parse_error is None


def test_builtin_arguments_may_hold_lists_dicts_and_quotes() -> None:
    text = "<|python_tag|>code_interpreter.call(code='print(\"a)\")', opts={'x': [1, 2]})"
    [call] = calls_of(parse(text, builtin=True))
    assert call.arguments == {"code": 'print("a)")', "opts": {"x": [1, 2]}}


@pytest.mark.parametrize(
    "body",
    ['"rain"', "query=search_for(x)", 'query=b"bytes"', "query={1, 2}", 'query="a" +'],
)
def test_builtin_arguments_that_are_not_keyword_literals_are_a_parse_error(body: str) -> None:
    [call] = calls_of(parse(f"<|python_tag|>brave_search.call({body})", builtin=True))
    assert call.name == "brave_search" and call.arguments == {}
    assert call.parse_error is not None and "keyword arguments" in call.parse_error


def test_a_builtin_call_cut_off_is_a_parse_error() -> None:
    [call] = calls_of(parse('<|python_tag|>wolfram_alpha.call(query="2+', builtin=True))
    assert call.name == "wolfram_alpha"
    assert call.parse_error is not None and "cut off" in call.parse_error


def test_text_after_a_builtin_call_is_text() -> None:
    events = parse('<|python_tag|>brave_search.call(query="x") Searching now.', builtin=True)
    assert len(calls_of(events)) == 1
    assert text_of(events) == "Searching now."


def test_raw_code_after_the_tag_is_a_python_call() -> None:
    code = "import math\nprint(math.sqrt(2))"
    [call] = calls_of(parse(f"<|python_tag|>{code}", builtin=True))
    assert (call.name, call.arguments) == ("python", {"code": code})


def test_raw_code_goes_to_code_interpreter_when_only_that_is_offered() -> None:
    [call] = calls_of(parse("<|python_tag|>print(1)", builtin=True, known={"code_interpreter"}))
    assert call.name == "code_interpreter"


def test_raw_code_streams_as_partial_arguments() -> None:
    parser = Llama3BuiltinToolsParser()
    events = parser.feed('<|python_tag|>print("hi")\nx = 1')
    # `print` could still have been `print.call(`: decided at the `(`.
    assert deltas_of(events)[0].name == "python"
    assert arguments_text(events) == '{"code":"print(\\"hi\\")\\nx = 1'
    [call] = calls_of(parser.finish())
    assert call.arguments == {"code": 'print("hi")\nx = 1'}


def test_the_tag_alone_at_the_end_is_a_parse_error() -> None:
    [call] = calls_of(parse("Let me run it. <|python_tag|>", builtin=True))
    assert call.parse_error is not None


def test_a_partial_tag_is_held_and_released_if_it_is_not_one() -> None:
    parser = Llama3Parser()
    assert text_of(parser.feed("a <|python")) == "a"
    assert text_of(parser.feed("_t")) == ""
    assert text_of(parser.feed("ag")) == ""
    assert text_of(parser.finish()) == " <|python_tag"


# Properties.

names = st.sampled_from(["get_weather", "search", "f"])
arguments = st.dictionaries(
    st.text(st.characters(codec="utf-8"), max_size=4),
    st.none() | st.integers() | st.text(max_size=6) | st.lists(st.booleans(), max_size=2),
    max_size=3,
)
calls = st.builds(
    lambda name, args, key: call_json(name, args, key=key),
    names,
    arguments,
    st.sampled_from(["parameters", "arguments"]),
)
builtin_calls = st.builds(
    lambda name, query: f"<|python_tag|>{name}.call(query={json.dumps(query)})",
    st.sampled_from(["brave_search", "wolfram_alpha"]),
    st.text(max_size=8),
)
plain = prose("{<;")
pieces = st.sampled_from(["{", "}", '"', "<|python_tag|>", "<|python", "; ", "\n", '{"name": "'])
outputs = st.lists(prose("{<") | calls | builtin_calls | pieces, max_size=8).map("".join)


@settings(max_examples=200, deadline=None)
@given(text=outputs, cuts=st.lists(st.integers(0, 500), max_size=5), builtin=st.booleans())
def test_any_split_parses_like_the_whole(text: str, cuts: list[int], builtin: bool) -> None:
    whole = view(parse(text, builtin=builtin, reasoning_format="none"))
    pieces = split_at(text, cuts)
    assert view(parse(text, pieces=pieces, builtin=builtin, reasoning_format="none")) == whole
    assert view(parse(text, step=1, builtin=builtin, reasoning_format="none")) == whole


@settings(max_examples=150, deadline=None)
@given(parts=st.lists(st.tuples(plain, calls), max_size=4))
def test_calls_between_prose_are_read_back(parts: list[tuple[str, str]]) -> None:
    text = "".join(p + c for p, c in parts)
    got = view(parse(text, step=3, reasoning_format="none"))
    assert [(n, a) for n, a, _, _ in got["calls"]] == [
        (json.loads(c)["name"], json.loads(c).get("parameters", json.loads(c).get("arguments")))
        for _, c in parts
    ]
    assert "".join(got["content"].split()) == "".join("".join(p for p, _ in parts).split())


@settings(max_examples=200, deadline=None)
@given(text=st.text(max_size=300) | outputs, builtin=st.booleans())
def test_garbage_never_raises(text: str, builtin: bool) -> None:
    check_arguments_are_json(parse(text, builtin=builtin, known={"f"}))


# Llama 3.2 prompted for Python calls writes a list of them as its whole reply.


def test_a_reply_opening_with_a_python_list_of_calls_is_calls() -> None:
    text = '[get_weather(city="Paris", days=2), get_time()]'
    for step in (0, 1, 3):
        assert [(c.name, c.arguments) for c in calls_of(parse(text, step=step))] == [
            ("get_weather", {"city": "Paris", "days": 2}),
            ("get_time", {}),
        ]


def test_a_python_list_later_in_the_reply_or_a_plain_list_is_text() -> None:
    for text in ("Try [f(a=1)] later.", "[1, 2, 3]", "[link](https://x.y)"):
        events = parse(text)
        assert calls_of(events) == [] and text_of(events) == text
