"""Format detection, conversion from any format, and the errors for unrecognisable tools."""

from __future__ import annotations

from typing import Any

import pytest

from farmhand.errors import ConfigError
from farmhand.tools.definition import ToolDefinition
from farmhand.tools.formats.detect import (
    convert_tool_choice,
    convert_tools,
    detect_format,
    detect_tool_choice_format,
    detect_tool_format,
    to_openai_dicts,
    to_openai_tools,
)

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"city": {"type": "string"}},
    "required": ["city"],
}
OPENAI = {
    "type": "function",
    "function": {"name": "weather", "description": "Weather", "parameters": SCHEMA},
}
ANTHROPIC = {"name": "weather", "description": "Weather", "input_schema": SCHEMA}
BEDROCK = {
    "toolSpec": {"name": "weather", "description": "Weather", "inputSchema": {"json": SCHEMA}}
}
GOOGLE_SCHEMA = {
    "type": "OBJECT",
    "properties": {"city": {"type": "STRING"}},
    "required": ["city"],
}
GOOGLE = {
    "functionDeclarations": [
        {"name": "weather", "description": "Weather", "parameters": GOOGLE_SCHEMA}
    ]
}
MCP = {"name": "weather", "description": "Weather", "inputSchema": SCHEMA}
EXPECTED = ToolDefinition("weather", "Weather", SCHEMA)
FLAT_EXPECTED = ToolDefinition("weather", "", SCHEMA)


@pytest.mark.parametrize(
    ("tool", "fmt", "expected"),
    [
        (OPENAI, "openai", EXPECTED),
        (ANTHROPIC, "anthropic", EXPECTED),
        (BEDROCK, "bedrock", EXPECTED),
        (GOOGLE, "google", EXPECTED),
        (MCP, "mcp", EXPECTED),
        ({"name": "weather", "parameters": SCHEMA}, "openai", FLAT_EXPECTED),
        (ToolDefinition("weather"), "openai", ToolDefinition("weather")),
    ],
    ids=["openai", "anthropic", "bedrock", "google", "mcp", "openai-flat", "definition"],
)
def test_each_format_is_detected_and_converted(
    tool: Any, fmt: str, expected: ToolDefinition
) -> None:
    assert detect_tool_format(tool) == fmt
    assert to_openai_tools([tool]) == [expected]


def test_detect_format_needs_one_shared_format() -> None:
    assert detect_format([ANTHROPIC, ANTHROPIC]) == "anthropic"
    assert detect_format([ANTHROPIC, OPENAI]) is None
    assert detect_format([]) is None
    assert detect_format([ANTHROPIC, {"nothing": 1}]) is None


def test_a_mixed_list_is_converted_tool_by_tool() -> None:
    tools = to_openai_tools([OPENAI, ANTHROPIC, BEDROCK, GOOGLE, MCP])

    assert tools == [EXPECTED] * 5


def test_openai_tool_without_type_is_accepted() -> None:
    assert to_openai_tools([{"function": OPENAI["function"]}]) == [EXPECTED]


def test_strict_survives_as_a_dict() -> None:
    strict = {"type": "function", "function": {**OPENAI["function"], "strict": True}}

    assert to_openai_dicts([strict])[0]["function"]["strict"] is True


def test_mcp_tools_keep_their_annotations() -> None:
    (definition,) = to_openai_tools([{**MCP, "annotations": {"readOnlyHint": True}}])

    assert definition.read_only


def test_tool_definitions_pass_through_with_their_annotations() -> None:
    definition = ToolDefinition("weather", annotations={"readOnlyHint": True})

    (converted,) = to_openai_tools([definition])

    assert converted.read_only


def test_mcp_schema_is_made_an_object_schema() -> None:
    mcp = {"name": "x", "inputSchema": {"$schema": "s", "properties": {}, "required": []}}

    (definition,) = to_openai_tools([mcp])

    assert definition.parameters == {"type": "object", "properties": {}}


@pytest.mark.parametrize(
    ("tools", "fragments"),
    [
        ([OPENAI, "weather"], ["tool 1", "is str", "not a mapping"]),
        ([{"nam": "x"}], ["tool 0", "no 'name'", "Expected one of", "OpenAI", "inputSchema"]),
        ([{"type": "other", "function": {"name": "x"}}], ["tool 0", 'type "other"']),
        ([{"type": "function", "function": {}}], ["tool 0", "'function' has no 'name'"]),
        (
            [{"type": "function", "function": {"name": "x", "parameters": "string"}}],
            ["tool 0 ('x')", "'parameters' is \"string\"", "JSON Schema object"],
        ),
        ([{"name": "x", "input_schema": None}], ["tool 0 ('x')", "'input_schema' is null"]),
        ([{"toolSpec": {"description": "d"}}], ["tool 0", "'toolSpec' has no 'name'"]),
        ([{"functionDeclarations": {"name": "x"}}], ["'functionDeclarations'", "must be a list"]),
        ([{"functionDeclarations": [{"name": ""}]}], ['functionDeclarations[0] has name ""']),
        ([{"name": 3, "inputSchema": {}}], ["tool 0", "name 3", "non-empty string"]),
    ],
)
def test_unrecognisable_tools_say_which_what_and_what_was_expected(
    tools: list[Any], fragments: list[str]
) -> None:
    with pytest.raises(ConfigError) as error:
        to_openai_tools(tools)

    for fragment in fragments:
        assert fragment in str(error.value)


def test_tools_must_be_a_list() -> None:
    with pytest.raises(ConfigError, match="tools must be a list"):
        to_openai_tools(OPENAI)


def test_native_tools_pass_through_unchanged_as_copies() -> None:
    tools = [ANTHROPIC]

    converted = convert_tools(tools, "anthropic")

    assert converted == tools
    assert converted[0] is not ANTHROPIC


def test_foreign_tools_convert_to_another_foreign_format() -> None:
    assert convert_tools([ANTHROPIC], "google") == [GOOGLE]
    assert convert_tools([GOOGLE], "bedrock") == [BEDROCK]
    assert convert_tools([MCP], "bedrock") == [BEDROCK]


def test_unknown_target_format_is_refused() -> None:
    with pytest.raises(ConfigError, match=r"unknown tool format 'antropic'.*anthropic"):
        convert_tools([OPENAI], "antropic")


@pytest.mark.parametrize(
    ("choice", "fmt"),
    [
        ("required", "openai"),
        ({"type": "any"}, "anthropic"),
        ({"any": {}}, "bedrock"),
        ({"functionCallingConfig": {"mode": "ANY"}}, "google"),
        ({"type": "whatever"}, None),
        ("always", None),
    ],
)
def test_tool_choice_format_is_detected(choice: Any, fmt: str | None) -> None:
    assert detect_tool_choice_format(choice) == fmt


def test_tool_choice_converts_between_foreign_formats() -> None:
    anthropic_choice = {"type": "tool", "name": "weather"}

    assert convert_tool_choice(anthropic_choice, "google") == {
        "functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["weather"]}
    }
    assert convert_tool_choice({"type": "none"}, "bedrock") is None
    assert convert_tool_choice(None, "anthropic") is None


def test_unrecognisable_tool_choice_is_refused() -> None:
    with pytest.raises(ConfigError, match="not recognised"):
        convert_tool_choice({"mode": "auto"}, "openai")
