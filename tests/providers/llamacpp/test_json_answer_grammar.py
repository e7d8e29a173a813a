"""Grammars for a JSON answer (`response_format`, Ollama's `format`): what turn gets which
constraint, and the GBNF llama.cpp is handed (tests/e2e/test_ollama_embedded.py samples
under it with the real model)."""

from __future__ import annotations

import pytest

from farmhand.providers.base import GenerationSettings
from farmhand.providers.llamacpp.grammar import (
    ROOT,
    answer_rules_for,
    build_tool_grammar,
    grammar_spec,
)
from farmhand.tools.choice import NONE, REQUIRED
from farmhand.tools.definition import ToolDefinition

WEATHER = ToolDefinition(
    "get_weather",
    "Weather in a city.",
    {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)
PERSON = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
    "required": ["name", "age"],
    "additionalProperties": False,
}


def test_an_answer_with_no_tools_is_the_answer_alone() -> None:
    spec = grammar_spec([], GenerationSettings(response_format=PERSON), constrain_auto=False)
    assert spec is not None and spec.answer == PERSON and spec.tools == ()
    grammar = build_tool_grammar(spec)
    assert f"{ROOT} ::= fh-answer\n" in grammar.text
    assert "fh-call" not in grammar.text


def test_an_auto_turn_with_tools_is_the_answer_or_calls() -> None:
    settings = GenerationSettings(response_format="json")
    spec = grammar_spec([WEATHER], settings, constrain_auto=False)
    assert spec is not None and spec.tools == (WEATHER,) and spec.answer == "json"
    assert f"{ROOT} ::= fh-answer | fh-calls\n" in build_tool_grammar(spec).text


def test_required_and_none_keep_their_meaning() -> None:
    required = GenerationSettings(response_format=PERSON, tool_choice=REQUIRED)
    spec = grammar_spec([WEATHER], required, constrain_auto=False)
    assert spec is not None and spec.answer is None  # a call it must be
    none = GenerationSettings(response_format=PERSON, tool_choice=NONE)
    spec = grammar_spec([WEATHER], none, constrain_auto=False)
    assert spec is not None and spec.tools == () and spec.answer == PERSON


def test_closed_objects_convert_without_falling_back(caplog: pytest.LogCaptureFixture) -> None:
    name, rules = answer_rules_for(PERSON)
    assert name == "fh-answer"
    assert '"\\"name\\""' in rules["fh-answer-name-kv"]
    assert "not convertible" not in caplog.text


def test_a_schema_the_converter_cannot_read_still_means_json(
    caplog: pytest.LogCaptureFixture,
) -> None:
    name, rules = answer_rules_for({"type": "object", "properties": {"x": False}})
    assert name == "fh-answer" and rules
    assert "constrained to JSON only" in caplog.text
