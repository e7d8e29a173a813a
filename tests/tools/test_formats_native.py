"""What each foreign format module does beyond the round trip: defaults, limits, errors."""

from __future__ import annotations

from typing import Any

import pytest

from farmhand.errors import ConfigError
from farmhand.tools.definition import ToolDefinition
from farmhand.tools.formats import anthropic, bedrock, google


def _tool(name: str, parameters: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    function: dict[str, Any] = {"name": name, **extra}
    if parameters is not None:
        function["parameters"] = parameters
    return {"type": "function", "function": function}


# --- Anthropic ------------------------------------------------------------------------------


def test_anthropic_tool_choice_none_is_expressed_not_dropped() -> None:
    assert anthropic.tool_choice_to_anthropic("none") == {"type": "none"}


def test_anthropic_drops_disable_parallel_tool_use_when_reading_a_choice() -> None:
    choice = {"type": "any", "disable_parallel_tool_use": True}

    assert anthropic.tool_choice_from_anthropic(choice) == "required"


def test_anthropic_rejects_a_foreign_tool_with_a_pointer_to_convert_tools() -> None:
    with pytest.raises(ConfigError, match=r"tool 0 .* not in OpenAI's shape.*convert_tools"):
        anthropic.tools_to_anthropic([{"name": "x", "input_schema": {}}])  # type: ignore[list-item]


def test_anthropic_reading_a_non_anthropic_tool_says_what_was_expected() -> None:
    with pytest.raises(ConfigError, match="input_schema"):
        anthropic.tools_from_anthropic([{"name": "x"}])


def test_unknown_tool_choice_is_refused() -> None:
    with pytest.raises(ConfigError, match=r'"always".*expected "auto", "none", "required"'):
        anthropic.tool_choice_to_anthropic("always")


# --- Bedrock --------------------------------------------------------------------------------


def test_bedrock_leaves_out_an_empty_description() -> None:
    (native,) = bedrock.tools_to_bedrock([ToolDefinition("ping")])

    assert native == {
        "toolSpec": {"name": "ping", "inputSchema": {"json": {"type": "object", "properties": {}}}}
    }


def test_bedrock_tool_config_holds_tools_and_choice() -> None:
    config = bedrock.tool_config_to_bedrock([ToolDefinition("ping")], "required")

    assert config is not None
    assert config["toolChoice"] == {"any": {}}
    assert [t["toolSpec"]["name"] for t in config["tools"]] == ["ping"]


def test_bedrock_tool_config_is_left_out_without_tools() -> None:
    assert bedrock.tool_config_to_bedrock([], "auto") is None


def test_bedrock_missing_tool_choice_means_auto() -> None:
    assert bedrock.tool_choice_from_bedrock(None) == "auto"


def test_bedrock_rejects_an_unknown_tool_choice() -> None:
    with pytest.raises(ConfigError, match="not a Bedrock toolChoice"):
        bedrock.tool_choice_from_bedrock({"none": {}})


# --- Google ---------------------------------------------------------------------------------


def test_google_puts_all_declarations_in_one_tool() -> None:
    native = google.tools_to_google([_tool("a"), _tool("b")])

    assert native == [{"functionDeclarations": [{"name": "a"}, {"name": "b"}]}]
    assert google.tools_to_google([]) == []


def test_google_schema_inlines_refs_and_keeps_only_gemini_keywords() -> None:
    schema = {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "properties": {
            "point": {"$ref": "#/$defs/point"},
            "email": {"type": "string", "format": "email", "default": "a@b.c"},
            "when": {"type": "string", "format": "date-time"},
            "mode": {"const": "fast"},
            "pair": {"type": "array", "items": [{"type": "string"}, {"type": "integer"}]},
        },
        "additionalProperties": False,
        "$defs": {"point": {"type": "object", "properties": {"x": {"type": "number"}}}},
    }

    assert google.schema_to_google(schema) == {
        "type": "OBJECT",
        "properties": {
            "point": {"type": "OBJECT", "properties": {"x": {"type": "NUMBER"}}},
            "email": {"type": "STRING"},
            "when": {"type": "STRING", "format": "date-time"},
            "mode": {"enum": ["fast"]},
            "pair": {"type": "ARRAY"},
        },
    }


def test_google_schema_expresses_null_as_nullable_and_several_types_as_any_of() -> None:
    schema = {
        "type": "object",
        "properties": {
            "maybe": {"type": ["integer", "null"]},
            "either": {"type": ["string", "number"]},
        },
    }

    properties = google.schema_to_google(schema)["properties"]

    assert properties["maybe"] == {"type": "INTEGER", "nullable": True}
    assert properties["either"] == {"anyOf": [{"type": "STRING"}, {"type": "NUMBER"}]}


def test_google_schema_does_not_mistake_a_property_named_like_a_keyword() -> None:
    schema = {"type": "object", "properties": {"default": {"type": "string"}}}

    assert google.schema_to_google(schema)["properties"] == {"default": {"type": "STRING"}}


def test_google_reads_snake_case_and_parameters_json_schema() -> None:
    json_schema = {"type": "object", "properties": {}, "additionalProperties": False}
    native = [
        {"function_declarations": [{"name": "a", "parameters_json_schema": json_schema}]},
        {"functionDeclarations": [{"name": "b", "parameters": {"type": "OBJECT"}}]},
    ]

    assert google.tools_from_google(native) == [
        _tool("a", json_schema),
        _tool("b", {"type": "object"}),
    ]


def test_google_choice_with_several_allowed_names_is_refused_not_widened() -> None:
    choice = {"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["a", "b"]}}

    with pytest.raises(ConfigError, match="allows several functions"):
        google.tool_choice_from_google(choice)


def test_google_choice_modes_are_case_insensitive_and_unspecified_is_auto() -> None:
    assert google.tool_choice_from_google({"functionCallingConfig": {"mode": "any"}}) == (
        "required"
    )
    unspecified = {"function_calling_config": {"mode": "MODE_UNSPECIFIED"}}
    assert google.tool_choice_from_google(unspecified) == "auto"


def test_google_choice_mode_without_an_openai_equivalent_is_refused() -> None:
    with pytest.raises(ConfigError, match="'VALIDATED' is not supported"):
        google.tool_choice_from_google({"functionCallingConfig": {"mode": "VALIDATED"}})
