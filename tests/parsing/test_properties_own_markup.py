"""The parser properties on each newer family's own markup: for the families of issue 14
(LFM2, Llama 4 pythonic, Gemma 2 / 3 / 4 and FunctionGemma, Reka, Magistral, Command R+,
MiniCPM, Granite, GigaChat, Apriel, Apertus, Phi-4-mini, InternLM, Jamba, ERNIE) and issue 28
(DeepSeek V4, Kimi K3, Hunyuan 3, Step 3, MiniMax M1, ToolACE, Granite 20B FC, the known
shapes, Hermes 2 Pro, Qwen3 8B), on outputs generated from the markup those families react
to: fed in any split, one character at a time included, a parser gives what it gives for the
whole output; garbage never raises; a damaged well-formed output (`well_formed.py`) parses
alike in any split. `test_properties.py` checks every family on the older families' markup;
this file is the same suite's part for the markup that one does not generate."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.parsing.helpers import damaged, events_of, split_at, view
from tests.parsing.well_formed import WELL_FORMED

from farmhand.parsing.registry import family_class

FAMILIES = [
    "lfm2", "llama4_pythonic", "gemma4", "function_gemma", "gemma", "reka", "magistral",
    "command_r_plus", "minicpm", "granite", "granite4", "gigachat", "apriel", "apertus",
    "phi4_mini", "internlm", "jamba", "ernie4_5",
    # issue 28
    "deepseek_v4", "kimi_k3", "hy3", "step3", "minimax_m1", "toolace", "granite_20b_fc",
    "known_shapes", "hermes_2_pro", "qwen3_8",
]  # fmt: skip

D = "\uff5cDSML\uff5c"
MARKUP = [
    "<|tool_call_start|>", "<|tool_call_end|>", "[f(", "a=1", ", ", ")]", "'x'", "<|python_start|>",
    "<|tool_call>", "call:f{", 'k:<|"|>v<|"|>', "}<tool_call|>", "<|channel>thought\n",
    "<channel|>", "<start_function_call>", "<escape>", "<end_function_call>", "[TOOL_CALLS]f",
    "[ARGS]", "[CALL_ID]1", "[THINK]", "[/THINK]", "Action:\n```json\n[", "```",
    '<function name="f">', '<param name="k">', "</param>", "</function>", "<![CDATA[", "]]>",
    "<|tool_call|>", "<response>", "</response>", "<|message_sep|>\n\nfunction call<|role_sep|>\n",
    "<|function_call|>", "[BEGIN FINAL RESPONSE]", "<tool_calls>", "</tool_calls>",
    "<|tools_prefix|>", "<|tools_suffix|>", "<|inner_prefix|>", "<|inner_suffix|>", "functools[",
    "<|action_start|><|plugin|>", "<|action_end|>", "<tool_call>", "</tool_call>", "<think>",
    "</think>", '{"name": "f", "arguments": ', '{"f": ', '{"tool_name": "f", "parameters": ',
    "{", "}", "[", "]", '"', "\\", ",", "\n", " ",
    # issue 28
    f"<{D}tool_calls>", f"</{D}tool_calls>", f'<{D}invoke name="f">', f"</{D}invoke>",
    f'<{D}parameter name="a" string="false">', f"</{D}parameter>",
    "<|open|>tools<|sep|>", "<|close|>tools<|sep|>", '<|open|>call tool="f" index="1"<|sep|>',
    "<|close|>call<|sep|>", '<|open|>argument key="a" type="string"<|sep|>',
    '<|open|>argument key="b" type="integer"<|sep|>', "<|close|>argument<|sep|>",
    "<|open|>think<|sep|>", "<|close|>think<|sep|>", "<|open|>response<|sep|>",
    "<|close|>response<|sep|>", "<tool_calls>", "</tool_calls>", "<tool_call>", "</tool_call>",
    "f<tool_sep>", "<arg_key>a</arg_key>", "<arg_value>", "</arg_value>",
    "<\uff5ctool_calls_begin\uff5c>", "<\uff5ctool_call_begin\uff5c>function<\uff5ctool_sep\uff5c>",
    '<steptml:invoke name="f">', '<steptml:parameter name="a">', "</steptml:parameter>",
    "</steptml:invoke>", "<\uff5ctool_call_end\uff5c>", "<\uff5ctool_calls_end\uff5c>",
    "[f(", "a=1", ", ", ")]", "<function_call> ", "<tools>\n", "</tools>", "```json\n", "```\n",
    "```python\n", "```", "<function=f>", "<parameter=a>", "</parameter>", "</function>",
    "<think>", "</think>", '{"name": "f", "arguments": ', '{"name": "g", "arguments": ',
    '{"tool_call": ', '{"type": "function", "function": ', '{"a": 1}', "{", "}", "[", "]",
    '"', "\\", ",", "\n", " ",
]  # fmt: skip

values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner),
    max_leaves=5,
)
outputs = st.lists(
    st.sampled_from(MARKUP) | st.text(max_size=10) | values.map(json.dumps), max_size=14
).map("".join)

SCHEMAS = {"f": {"type": "object", "properties": {"a": {"type": "string"}, "b": {}}}}
OPTIONS: list[dict[str, Any]] = [
    {"reasoning_format": "none"},
    {"reasoning_format": "auto"},
    {"reasoning_format": "auto", "thinking_forced_open": True},
    {"known_names": frozenset({"f"}), "parallel_tool_calls": False},
    {"known_names": frozenset({"f"}), "tool_schemas": SCHEMAS},
]


def _view(family: str, pieces: list[str], options: dict[str, Any]) -> dict[str, Any]:
    return view(events_of(family_class(family), "".join(pieces), pieces=pieces, **options))


@pytest.mark.parametrize("family", FAMILIES)
@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    text=outputs,
    cuts=st.lists(st.integers(min_value=0, max_value=400), max_size=6),
    which=st.integers(0, 4),
)
def test_any_split_parses_like_the_whole(
    family: str, text: str, cuts: list[int], which: int
) -> None:
    options = OPTIONS[which]
    whole = _view(family, [text], options)
    assert _view(family, split_at(text, cuts), options) == whole
    assert _view(family, list(text), options) == whole


@pytest.mark.parametrize("family", FAMILIES)
@settings(max_examples=80, deadline=None)
@given(text=st.text(max_size=200) | outputs)
def test_garbage_never_raises(family: str, text: str) -> None:
    message = _view(family, [text], {"tool_schemas": {"f": {"properties": {"k": {}}}}})
    assert isinstance(message["content"], str)


@pytest.mark.parametrize("family", FAMILIES)
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), cut=st.integers(0, 300))
def test_damaged_output_parses_alike_in_any_split(
    family: str, data: st.DataObject, cut: int
) -> None:
    text = data.draw(
        damaged(st.tuples(st.just(WELL_FORMED[family]), st.none()), st.sampled_from(MARKUP))
    )
    options = {"reasoning_format": "auto"}
    cut %= len(text) + 1
    whole = _view(family, [text], options)
    assert _view(family, [text[:cut], text[cut:]], options) == whole
    assert _view(family, list(text), options) == whole
