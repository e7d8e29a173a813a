"""Properties every family parser keeps, on generated outputs.

- Fed in any split, a parser gives what it gives for the whole output (and what it
  emits is never taken back).
- Garbage never raises.
- Every call a ToolCallDelta opened ends in a ToolCallEvent (consumers hold a call's deltas
  until its event, so a call that ended as anything else would take text with it).
"""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.parsing.helpers import split_at

from farmhand.messages import StreamEvent, ToolCallDelta, ToolCallEvent
from farmhand.parsing.base import ParsedMessage, ParserOptions
from farmhand.parsing.registry import FAMILIES, parser_for

# Pieces of every family's markup, so generated text keeps hitting the parsers' edge cases.
MARKUP = [
    "<tool_call>",
    "</tool_call>",
    "<think>",
    "</think>",
    "```json\n",
    "```",
    "<tools>",
    "<function=f>",
    "</function>",
    '<function name="f">',
    "<|python_tag|>",
    ">>>",
    "all\n",
    "python\n",
    " functools[",
    "[TOOL_CALLS]",
    "<|START_ACTION|>",
    "<|END_ACTION|>",
    "<|START_THINKING|>",
    "<|END_THINKING|>",
    "<|START_RESPONSE|>",
    "<|END_RESPONSE|>",
    "<｜tool▁calls▁begin｜>",
    "<｜tool▁call▁begin｜>function<｜tool▁sep｜>f\n",
    "<｜tool▁call▁end｜>",
    "<｜tool▁calls▁end｜>",
    # Helper A's families: XML-ish calls, Harmony, Kimi K2, Nemotron.
    "<parameter=a>",
    "\n</parameter>",
    "<seed:tool_call>",
    "</seed:tool_call>",
    "<seed:think>",
    "</seed:think>",
    "<arg_key>a</arg_key>",
    "<arg_value>",
    "</arg_value>",
    "<minimax:tool_call>",
    '<invoke name="f">',
    '<parameter name="a">',
    "</parameter>",
    "</invoke>",
    "</minimax:tool_call>",
    "<｜DSML｜function_calls>",
    '<｜DSML｜invoke name="f">',
    '<｜DSML｜parameter name="a" string="false">',
    "</｜DSML｜parameter>",
    "</｜DSML｜invoke>",
    "</｜DSML｜function_calls>",
    "<|channel|>analysis<|message|>",
    "<|channel|>final<|message|>",
    "<|channel|>commentary to=functions.f <|constrain|>json<|message|>",
    "<|end|>",
    "<|start|>assistant",
    "<|call|>",
    "<|tool_calls_section_begin|>",
    "<|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>",
    "<|tool_call_end|>",
    "<|tool_calls_section_end|>",
    "<TOOLCALL>",
    "</TOOLCALL>",
    "<function_calls>\n",
    'f(a=1, b="x")\n',
    "</function_calls>",
    "<tool_calls>",
    "<tool_call>f\n```json\n",
    "</tool_calls>",
    "<answer>",
    "</answer>",
    "<longcat_tool_call>",
    "</longcat_tool_call>",
    "<longcat_arg_key>a</longcat_arg_key>",
    "<longcat_arg_value>",
    "</longcat_arg_value>",
    '[{"name": "f", "arguments": ',
    '{"tool_call": ',
    '{"response": "',
    '{"name": "f", "arguments": ',
    '{"name": "f", "parameters": ',
    "{",
    "}",
    "[",
    "]",
    '"',
    "\\",
    ",",
    ";",
    "\n",
    " ",
]

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=6,
)
call_json = st.builds(
    lambda name, args: json.dumps({"name": name, "arguments": args}),
    st.sampled_from(["f", "g", "special_function"]),
    st.dictionaries(st.text(max_size=5), json_values, max_size=3),
)
outputs = st.lists(st.sampled_from(MARKUP) | st.text(max_size=12) | call_json, max_size=14).map(
    "".join
)


def _parse(family: str, pieces: list[str], options: ParserOptions) -> list[StreamEvent]:
    parser = parser_for(None, None, None, family=family, options=options)
    events: list[StreamEvent] = []
    for piece in pieces:
        events += parser.feed(piece)
    return events + parser.finish()


def _view(events: list[StreamEvent]) -> dict[str, object]:
    message = ParsedMessage.from_events(events)
    return {
        "content": message.content,
        "reasoning": message.reasoning_content,
        "calls": [(c.name, c.arguments, c.parse_error is not None) for c in message.tool_calls],
    }


OPTIONS = [
    ParserOptions(reasoning_format="none"),
    ParserOptions(reasoning_format="deepseek"),
    ParserOptions(reasoning_format="deepseek", thinking_forced_open=True),
    ParserOptions(known_names=frozenset({"f"}), parallel_tool_calls=False),
]


@pytest.mark.parametrize("family", FAMILIES)
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    text=outputs,
    cuts=st.lists(st.integers(min_value=0, max_value=400), max_size=6),
    which=st.integers(0, 3),
)
def test_any_split_parses_like_the_whole(
    family: str, text: str, cuts: list[int], which: int
) -> None:
    options = OPTIONS[which]
    pieces = split_at(text, cuts)
    assert _view(_parse(family, pieces, options)) == _view(_parse(family, [text], options))


@pytest.mark.parametrize("family", FAMILIES)
@settings(max_examples=60, deadline=None)
@given(text=outputs)
def test_char_by_char_parses_like_the_whole(family: str, text: str) -> None:
    options = ParserOptions(reasoning_format="deepseek")
    assert _view(_parse(family, list(text), options)) == _view(_parse(family, [text], options))


@pytest.mark.parametrize("family", FAMILIES)
@settings(max_examples=150, deadline=None)
@given(text=st.text(max_size=200))
def test_garbage_never_raises(family: str, text: str) -> None:
    events = _parse(family, [text], ParserOptions())
    message = ParsedMessage.from_events(events)
    # Nothing is lost: what is not a call or reasoning is text.
    assert isinstance(message.content, str)


@pytest.mark.parametrize("family", FAMILIES)
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=outputs, which=st.integers(0, 3))
def test_every_announced_call_ends_in_a_call_event(family: str, text: str, which: int) -> None:
    events = _parse(family, list(text), OPTIONS[which])
    opened = sum(1 for e in events if isinstance(e, ToolCallDelta) and e.name)
    ended = sum(1 for e in events if isinstance(e, ToolCallEvent))
    assert opened <= ended
