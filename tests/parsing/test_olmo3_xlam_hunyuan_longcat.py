"""The OLMo 3, xLAM-2, Hunyuan and LongCat parsers (families outside llama.cpp's corpus), on
cases written from their published formats:

- OLMo 3 (allenai/Olmo-3-*-Instruct, chat_template in tokenizer_config.json): calls are Python
  calls, one a line, inside `<function_calls>...</function_calls>`; the generation prompt is
  `<|im_start|>assistant\\n` (Think models add `<think>`). vLLM reads it as `olmo3`.
- xLAM-2 (Salesforce/xLAM-2-*-fc-r chat template): the reply is a JSON array
  `[{"name": ..., "arguments": {...}}]`; vLLM's `xlam` parser also takes it in a ```json fence.
- Hunyuan (tencent/Hunyuan-7B-Instruct and -A13B-Instruct chat template): calls are
  `<tool_calls><tool_call>NAME\\n```json\\nARGS\\n```</tool_call>...</tool_calls>` after the
  `<|extra_0|>` header; replies may be wrapped in `<answer>...</answer>`.
- LongCat (meituan-longcat/LongCat-Flash-Chat: Hermes JSON in `<longcat_tool_call>`, as vLLM's
  `longcat` parser reads it; later LongCat models write GLM-style
  `<longcat_arg_key>/<longcat_arg_value>` in the same tag).
"""

from __future__ import annotations

from typing import Any

import pytest
from tests.parsing.helpers import message_of, splits

from farmhand.parsing.base import FamilyParser
from farmhand.parsing.hunyuan import HunyuanParser
from farmhand.parsing.longcat import LongCatParser
from farmhand.parsing.olmo3 import Olmo3Parser
from farmhand.parsing.xlam import XlamParser


def parse(family: type[FamilyParser], text: str, **options: Any) -> dict[str, Any]:
    """The message for `text`, checked to be the same however the text is split."""
    options.setdefault("reasoning_format", "auto")
    whole = message_of(family, text, **options)
    for pieces in splits(text, every=3):
        assert message_of(family, "", pieces, **options) == whole
    return whole


OLMO = (
    "I'll check both.\n<function_calls>\n"
    'get_weather(city="Paris", days=3)\n'
    'set_flags(on=true, off=None, tags=[\'a\', "é"], nested={"k": [1, 2.5]})\n'
    "</function_calls>"
)


def test_olmo3_calls_one_a_line() -> None:
    assert parse(Olmo3Parser, OLMO) == {
        "content": "I'll check both.",
        "reasoning_content": "",
        "tool_calls": [
            {"name": "get_weather", "arguments": {"city": "Paris", "days": 3}},
            {
                "name": "set_flags",
                "arguments": {
                    "on": True,
                    "off": None,
                    "tags": ["a", "é"],
                    "nested": {"k": [1, 2.5]},
                },
            },
        ],
    }


def test_olmo3_a_call_over_lines_and_broken_or_cut_calls() -> None:
    text = '<function_calls>\nwrite(text="""line one\nline two""")\nnot a call\n</function_calls>'
    calls = parse(Olmo3Parser, text)["tool_calls"]
    assert calls[0] == {"name": "write", "arguments": {"text": "line one\nline two"}}
    assert "expected one call a line" in calls[1]["error"]
    (cut,) = parse(Olmo3Parser, '<function_calls>\nget_weather(city="Par')["tool_calls"]
    assert "cut off" in cut["error"] and cut["arguments"] == {}


def test_olmo3_never_runs_code() -> None:
    text = "<function_calls>\nf(x=__import__('os').system('true'))\n</function_calls>"
    (call,) = parse(Olmo3Parser, text)["tool_calls"]
    assert call["arguments"] == {} and "error" in call


@pytest.mark.parametrize(
    "text",
    [
        '[{"name": "f", "arguments": {"a": 1}}, {"name": "g", "arguments": {}}]',
        '```json\n[{"name": "f", "arguments": {"a": 1}}, {"name": "g", "arguments": {}}]\n```',
    ],
)
def test_xlam_a_reply_that_is_an_array_of_calls(text: str) -> None:
    assert parse(XlamParser, text) == {
        "content": "",
        "reasoning_content": "",
        "tool_calls": [{"name": "f", "arguments": {"a": 1}}, {"name": "g", "arguments": {}}],
    }


def test_xlam_other_replies_are_text() -> None:
    for text in ("[1] says so.", "Sure: [{...}]", '[{"x": 1}]'):
        assert parse(XlamParser, text)["content"] == text


HUNYUAN = (
    "<think>Need weather.</think>\n<answer>\nChecking.\n<tool_calls><tool_call>get_weather\n"
    '```json\n{"city": "北京"}\n```</tool_call>\n<tool_call>get_time\n```json\n{}\n```'
    "</tool_call></tool_calls>\n</answer>"
)


def test_hunyuan_calls_in_the_answer() -> None:
    assert parse(HunyuanParser, HUNYUAN) == {
        "content": "Checking.",
        "reasoning_content": "Need weather.",
        "tool_calls": [
            {"name": "get_weather", "arguments": {"city": "北京"}},
            {"name": "get_time", "arguments": {}},
        ],
    }


def test_hunyuan_answer_tags_are_not_text_and_cut_calls_never_run() -> None:
    assert parse(HunyuanParser, "<answer>Hello</answer>")["content"] == "Hello"
    (call,) = parse(HunyuanParser, '<tool_calls><tool_call>f\n```json\n{"a": ')["tool_calls"]
    assert "cut off" in call["error"]


def test_longcat_json_and_key_value_forms() -> None:
    json_form = '<longcat_tool_call>{"name": "f", "arguments": {"a": 1}}</longcat_tool_call>'
    tag_form = (
        "Running it.\n<longcat_tool_call>Bash\n<longcat_arg_key>command</longcat_arg_key>\n"
        "<longcat_arg_value>ls  -l\n</longcat_arg_value>\n</longcat_tool_call>"
    )
    assert parse(LongCatParser, json_form)["tool_calls"] == [{"name": "f", "arguments": {"a": 1}}]
    assert parse(LongCatParser, tag_form) == {
        "content": "Running it.",
        "reasoning_content": "",
        "tool_calls": [{"name": "Bash", "arguments": {"command": "ls  -l\n"}}],
    }
