"""The JSONL suite format: every key, tools in any format, and errors that name the line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from farmhand.errors import ConfigError
from farmhand.eval.suite import BUILTIN, load_suite, parse_suite

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Weather for a city.",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
    },
}


def lines(*objects: object) -> list[str]:
    return [json.dumps(o) for o in objects]


def test_builtin_suite_covers_every_case_kind() -> None:
    suite = load_suite(BUILTIN)
    assert suite.categories == [
        "single",
        "multiple",
        "parallel",
        "no_call",
        "multi_turn",
        "follow_up",
    ]
    by_category = {c: [x for x in suite.cases if x.category == c] for c in suite.categories}
    assert all(len(case.expected) == 1 for case in by_category["single"])
    assert all(len(case.tools) > 1 for case in by_category["multiple"])
    assert all(len(case.expected) >= 2 for case in by_category["parallel"])
    assert all(not case.expected for case in by_category["no_call"])
    assert all(case.messages[-1].role == "user" for case in by_category["multi_turn"])
    assert any(m.role == "assistant" for c in by_category["multi_turn"] for m in c.messages)
    assert all(case.messages[-1].role == "tool" for case in by_category["follow_up"])
    assert len({case.id for case in suite.cases}) == len(suite.cases)


def test_prompt_case_with_acceptable_values_and_optional_argument() -> None:
    suite = parse_suite(
        lines(
            {
                "id": "w",
                "category": "single",
                "system": "Be brief.",
                "prompt": "Weather in Paris?",
                "tools": [WEATHER],
                "expected": [
                    {"name": "get_weather", "arguments": {"city": ["Paris"], "unit": [None, "C"]}}
                ],
            }
        ),
        "t",
    )
    (case,) = suite.cases
    assert [m.role for m in case.messages] == ["system", "user"]
    assert case.tools[0].name == "get_weather"
    assert case.expected[0].arguments == {"city": ("Paris",), "unit": (None, "C")}
    assert case.expects_call


def test_bare_value_is_one_acceptable_value_and_list_values_are_wrapped() -> None:
    suite = parse_suite(
        lines(
            {
                "prompt": "x",
                "tools": [WEATHER],
                "expected": [{"name": "get_weather", "arguments": {"a": 3, "b": [["x", "y"]]}}],
            }
        ),
        "t",
    )
    assert suite.cases[0].expected[0].arguments == {"a": (3,), "b": (["x", "y"],)}
    assert suite.cases[0].id == "t:1"
    assert suite.cases[0].category == "default"


def test_toolset_lines_anthropic_tools_and_messages_with_calls() -> None:
    anthropic = {"name": "lookup", "description": "Find.", "input_schema": {"type": "object"}}
    suite = parse_suite(
        lines(
            {"toolset": "t1", "tools": [anthropic]},
            {
                "messages": [
                    {"role": "user", "content": "find x"},
                    {
                        "role": "assistant",
                        "tool_calls": [
                            {"id": "c1", "function": {"name": "lookup", "arguments": '{"q": "x"}'}}
                        ],
                    },
                    {"role": "tool", "tool_call_id": "c1", "content": "x is 4"},
                ],
                "tools": "@t1",
                "expected": [],
                "answer_contains": "4",
            },
        ),
        "t",
    )
    (case,) = suite.cases
    assert case.tools[0].name == "lookup"
    assert case.messages[1].tool_calls[0].arguments == {"q": "x"}
    assert case.messages[2].name == "lookup"
    assert case.answer_contains == ("4",)
    assert not case.expects_call


def test_tools_from_a_file_relative_to_the_suite(tmp_path: Path) -> None:
    (tmp_path / "tools.json").write_text(json.dumps([WEATHER]))
    suite_file = tmp_path / "mine.jsonl"
    suite_file.write_text(
        json.dumps({"prompt": "hi", "tools": "file://tools.json", "expected": []}) + "\n"
    )
    suite = load_suite(str(suite_file))
    assert suite.name == "mine"
    assert suite.cases[0].tools[0].name == "get_weather"


@pytest.mark.parametrize(
    ("line", "needle"),
    [
        ("{not json", "invalid JSON"),
        ('{"prompt": "x", "tools": []}', "`expected` is required"),
        ('{"prompt": "x", "messages": [], "expected": []}', "either `prompt`"),
        ('{"prompt": "x", "expected": [], "tools": "@nope"}', "names no earlier toolset"),
        ('{"prompt": "x", "expected": [], "colour": 1}', "unknown key(s) colour"),
        ('{"prompt": "x", "expected": [{"arguments": {}}]}', "expected[0]"),
        ('{"prompt": "x", "expected": [{"name": "f", "arguments": {"a": []}}]}', "no acceptable"),
        ('{"prompt": "x", "expected": [], "tools": [{"bad": 1}]}', "tool"),
        (
            '{"messages": [{"role": "user", "content": "a"}, {"role": "assistant"}],'
            ' "expected": []}',
            "ends with an assistant turn",
        ),
        (
            '{"messages": [{"role": "tool", "tool_call_id": "z", "content": "r"}], "expected": []}',
            "tool_call_id",
        ),
        ('{"prompt": "x", "expected": [], "tool_choice": "sometimes"}', "tool_choice"),
        ('{"prompt": "x", "expected": [{"name": "g"}]}', "not one of the case's tools"),
    ],
)
def test_errors_name_the_line(line: str, needle: str) -> None:
    with pytest.raises(ConfigError) as error:
        parse_suite(["", line], "s", where="s.jsonl")
    assert "s.jsonl:2" in str(error.value)
    assert needle in str(error.value)


def test_duplicate_ids_and_empty_suites_are_errors(tmp_path: Path) -> None:
    case = '{"id": "a", "prompt": "x", "expected": []}'
    with pytest.raises(ConfigError, match="used twice"):
        parse_suite([case, case], "s")
    with pytest.raises(ConfigError, match="no cases"):
        parse_suite(["// only a comment"], "s")
    with pytest.raises(ConfigError, match="not found"):
        load_suite(str(tmp_path / "missing.jsonl"))


def test_select_by_category_and_limit() -> None:
    suite = load_suite(BUILTIN)
    chosen = suite.select(["single", "parallel"], limit=2)
    assert [c.category for c in chosen.cases] == ["single", "single", "parallel", "parallel"]
    with pytest.raises(ConfigError, match="no category 'bogus'"):
        suite.select(["bogus"])
