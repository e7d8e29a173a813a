"""The families on the XML-ish call reader: Qwen3-Coder (and Qwen3.5, Nemotron 3, Step 3.5),
Seed-OSS, GLM 4.5-4.7, MiniMax M2 and DeepSeek V3.2's DSML; and values typed by the schema."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.parsing.helpers import arguments_text, events_of, message_of, splits

from farmhand.messages import ToolCallDelta
from farmhand.parsing.base import FamilyParser
from farmhand.parsing.dsml import DeepSeekV32Parser
from farmhand.parsing.glm import Glm45Parser
from farmhand.parsing.minimax_m2 import MiniMaxM2Parser
from farmhand.parsing.qwen3_coder import Qwen3CoderParser
from farmhand.parsing.schema_values import typed_value
from farmhand.parsing.seed_oss import SeedOssParser

SCHEMAS = {
    "edit": {
        "type": "object",
        "properties": {
            "path": {"type": "string"},
            "line": {"type": "integer"},
            "ratio": {"type": "number"},
            "force": {"type": "boolean"},
            "tags": {"type": "array"},
            "code": {"type": ["string", "null"]},
            "unit": {"enum": ["c", "f"]},
        },
    }
}


def qwen(name: str, **params: str) -> str:
    body = "".join(f"<parameter={k}>\n{v}\n</parameter>\n" for k, v in params.items())
    return f"<tool_call>\n<function={name}>\n{body}</function>\n</tool_call>"


def seed_call(params: str) -> str:
    return f"<seed:tool_call>\n<function=edit>\n{params}\n</function>\n</seed:tool_call>"


def parse(
    family: type[FamilyParser], text: str, pieces: list[str] | None = None, **options: Any
) -> dict[str, Any]:
    options.setdefault("tool_schemas", SCHEMAS)
    return message_of(family, text, pieces, **options)


def test_values_are_typed_by_the_schema() -> None:
    text = qwen(
        "edit",
        path="42",
        line="42",
        ratio="0.5",
        force="true",
        tags='["a", "b"]',
        code="null",
        unit="c",
        extra="7",
    )
    assert parse(Qwen3CoderParser, text)["tool_calls"] == [
        {
            "name": "edit",
            "arguments": {
                "path": "42",  # a string parameter keeps the text
                "line": 42,
                "ratio": 0.5,
                "force": True,
                "tags": ["a", "b"],
                "code": "null",  # string first: a nullable string is still text
                "unit": "c",
                "extra": 7,  # no schema: JSON when it reads as JSON
            },
        }
    ]


def test_typed_value_rules() -> None:
    assert typed_value("5", {"type": "integer"}) == 5
    assert typed_value(" 5\n", {"type": "string"}) == " 5\n"
    assert typed_value("True", {"type": "boolean"}) is True
    assert typed_value("not json", {"type": "integer"}) == "not json"  # never raises
    assert typed_value("5", None, is_string=True) == "5"
    assert typed_value('{"a": 1}', {"anyOf": [{"type": "object"}, {"type": "null"}]}) == {"a": 1}


def test_whitespace_inside_values_is_kept_exactly() -> None:
    code = "def f():\n\n    return  1\t\n"
    # Qwen3-Coder writes a value on lines of its own: those two newlines are framing only.
    text = qwen("edit", code=code)
    assert parse(Qwen3CoderParser, text)["tool_calls"][0]["arguments"] == {"code": code}
    # Seed-OSS writes it inline: every character is the value's.
    seed = seed_call(f"<parameter=code>{code}</parameter>")
    assert parse(SeedOssParser, seed)["tool_calls"][0]["arguments"] == {"code": code}


def test_markers_inside_a_value_do_not_end_the_call() -> None:
    markup = "</tool_call> and </function> and <parameter=x> and <tool_call>"
    text = "Here.\n" + qwen("edit", code=markup) + "\nDone."
    assert parse(Qwen3CoderParser, text) == {
        "content": "Here.Done.",
        "reasoning_content": "",
        "tool_calls": [{"name": "edit", "arguments": {"code": markup}}],
    }


def test_several_calls_in_order_with_unicode_and_nested_values() -> None:
    text = (
        qwen("edit", path="données/日本.txt") + "\n" + qwen("edit", tags='[{"a": [1, {"b": "é"}]}]')
    )
    calls = parse(Qwen3CoderParser, text)["tool_calls"]
    assert calls == [
        {"name": "edit", "arguments": {"path": "données/日本.txt"}},
        {"name": "edit", "arguments": {"tags": [{"a": [1, {"b": "é"}]}]}},
    ]
    assert parse(Qwen3CoderParser, text, parallel_tool_calls=False)["tool_calls"] == calls[:1]


def test_a_call_cut_off_by_the_token_limit_never_runs() -> None:
    for cut in ("<tool_call>\n<function=edit>\n<parameter=line>\n4", "<tool_call>\n<function=ed"):
        (call,) = parse(Qwen3CoderParser, cut)["tool_calls"]
        assert call["arguments"] == {}
        assert "cut off" in call["error"]


def test_a_block_that_holds_no_call_becomes_a_call_with_an_error() -> None:
    (call,) = parse(Qwen3CoderParser, "<tool_call>\nsomething else\n</tool_call>")["tool_calls"]
    assert "<function=NAME>" in call["error"]


def test_a_json_call_in_the_block_is_read_too() -> None:
    text = '<tool_call>\n{"name": "edit", "arguments": {"code": "x</tool_call>y"}}\n</tool_call>'
    assert parse(Qwen3CoderParser, text)["tool_calls"] == [
        {"name": "edit", "arguments": {"code": "x</tool_call>y"}}
    ]


def test_arguments_stream_as_json_that_ends_as_the_call() -> None:
    text = qwen("edit", path="a.txt", line="3")
    events = events_of(Qwen3CoderParser, text, step=1, tool_schemas=SCHEMAS)
    deltas = [e for e in events if isinstance(e, ToolCallDelta)]
    assert deltas[0].name == "edit"
    assert len(deltas) > 3  # the key, then the value, of each argument
    assert json.loads(arguments_text(events)) == {"path": "a.txt", "line": 3}


GLM_CALL = "<tool_call>edit\n<arg_key>line</arg_key>\n<arg_value>7</arg_value>\n</tool_call>"
MINIMAX_CALL = (
    '<minimax:tool_call>\n<invoke name="edit">\n<parameter name="line">7</parameter>\n'
    '</invoke>\n<invoke name="edit">\n<parameter name="path">p</parameter>\n</invoke>\n'
    "</minimax:tool_call>"
)
DSML = "｜DSML｜"
DSML_CALL = (
    f'<{DSML}function_calls>\n<{DSML}invoke name="edit">\n'
    f'<{DSML}parameter name="line" string="false">7</{DSML}parameter>\n'
    f'<{DSML}parameter name="path" string="true">007</{DSML}parameter>\n'
    f"</{DSML}invoke>\n</{DSML}function_calls>"
)


@pytest.mark.parametrize(
    ("family", "text", "calls"),
    [
        (Glm45Parser, GLM_CALL, [{"name": "edit", "arguments": {"line": 7}}]),
        (Glm45Parser, "<tool_call>edit</tool_call>", [{"name": "edit", "arguments": {}}]),
        (
            MiniMaxM2Parser,
            MINIMAX_CALL,
            [
                {"name": "edit", "arguments": {"line": 7}},
                {"name": "edit", "arguments": {"path": "p"}},
            ],
        ),
        (DeepSeekV32Parser, DSML_CALL, [{"name": "edit", "arguments": {"line": 7, "path": "007"}}]),
    ],
)
def test_each_family_reads_its_tags(
    family: type[FamilyParser], text: str, calls: list[dict[str, Any]]
) -> None:
    whole = parse(family, "Let me see.\n" + text + "\nOK")
    assert whole == {"content": "Let me see.OK", "reasoning_content": "", "tool_calls": calls}
    for pieces in splits("Let me see.\n" + text + "\nOK", every=7):
        assert parse(family, "", pieces) == whole


def test_seed_reasoning_tags() -> None:
    text = "<seed:think>plan</seed:think>Hi"
    assert parse(SeedOssParser, text, reasoning_format="auto") == {
        "content": "Hi",
        "reasoning_content": "plan",
        "tool_calls": [],
    }


@settings(max_examples=80, deadline=None)
@given(
    value=st.text(st.characters(codec="utf-8", exclude_characters="<"), max_size=20),
    cuts=st.lists(st.integers(0, 200), max_size=5),
)
def test_any_string_value_survives_any_split(value: str, cuts: list[int]) -> None:
    text = seed_call(f"<parameter=path>{value}</parameter>")
    points = sorted({c % (len(text) + 1) for c in cuts})
    pieces = [text[a:b] for a, b in zip([0, *points], [*points, len(text)], strict=True)]
    assert parse(SeedOssParser, "", pieces)["tool_calls"] == [
        {"name": "edit", "arguments": {"path": value}}
    ]
