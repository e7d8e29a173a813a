"""OpenAI -> foreign format -> OpenAI gives back what went in, tools and tool_choice alike."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from farmhand.tools.definition import ToolDefinition
from farmhand.tools.formats import anthropic, bedrock, google
from farmhand.tools.formats.detect import convert_tool_choice, convert_tools, to_openai_tools

WEATHER: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Current weather for a city",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {"type": "string", "description": "City name"},
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
                "days": {"type": "integer", "minimum": 1, "maximum": 7},
                "tags": {"type": "array", "items": {"type": "string"}},
                "note": {"type": ["string", "null"]},
                "where": {
                    "type": "object",
                    "properties": {"lat": {"type": "number"}, "lon": {"type": "number"}},
                    "required": ["lat", "lon"],
                },
            },
            "required": ["city"],
        },
    },
}
NO_DESCRIPTION: dict[str, Any] = {
    "type": "function",
    "function": {"name": "ping", "parameters": {"type": "object", "properties": {}}},
}

Converter = Callable[[list[dict[str, Any]]], list[dict[str, Any]]]
ROUND_TRIPS: dict[str, tuple[Converter, Converter]] = {
    "anthropic": (anthropic.tools_to_anthropic, anthropic.tools_from_anthropic),
    "bedrock": (bedrock.tools_to_bedrock, bedrock.tools_from_bedrock),
    "google": (google.tools_to_google, google.tools_from_google),
}
CHOICE_ROUND_TRIPS: dict[str, tuple[Callable[[Any], Any], Callable[[Any], Any]]] = {
    "anthropic": (anthropic.tool_choice_to_anthropic, anthropic.tool_choice_from_anthropic),
    "bedrock": (bedrock.tool_choice_to_bedrock, bedrock.tool_choice_from_bedrock),
    "google": (google.tool_choice_to_google, google.tool_choice_from_google),
}
CHOICES: list[Any] = ["auto", "none", "required", {"type": "function", "function": {"name": "x"}}]


@pytest.mark.parametrize("fmt", ROUND_TRIPS)
def test_tools_round_trip_is_identity(fmt: str) -> None:
    to_native, from_native = ROUND_TRIPS[fmt]
    tools = [copy.deepcopy(WEATHER), copy.deepcopy(NO_DESCRIPTION)]

    native = to_native(tools)

    assert from_native(native) == tools
    assert tools == [WEATHER, NO_DESCRIPTION]  # the input was not touched


@pytest.mark.parametrize("fmt", ROUND_TRIPS)
def test_round_trip_through_convert_tools_is_identity(fmt: str) -> None:
    native = convert_tools([WEATHER], fmt)

    assert convert_tools(native, "openai") == [WEATHER]


@pytest.mark.parametrize("fmt", ROUND_TRIPS)
def test_tool_definitions_round_trip(fmt: str) -> None:
    definitions = [
        ToolDefinition.from_openai(WEATHER),
        ToolDefinition("bare"),  # no description, default empty parameters
    ]

    native = convert_tools(definitions, fmt)

    assert to_openai_tools(native) == definitions


def test_anthropic_keeps_strict_only_when_asked() -> None:
    strict_tool = copy.deepcopy(WEATHER)
    strict_tool["function"]["strict"] = True

    assert "strict" not in anthropic.tools_to_anthropic([strict_tool])[0]
    native = anthropic.tools_to_anthropic([strict_tool], keep_strict=True)
    assert native[0]["strict"] is True
    assert anthropic.tools_from_anthropic(native) == [strict_tool]


@pytest.mark.parametrize("fmt", ["bedrock", "google"])
def test_strict_is_dropped_where_the_format_has_no_such_thing(fmt: str) -> None:
    strict_tool = copy.deepcopy(WEATHER)
    strict_tool["function"]["strict"] = True
    to_native, from_native = ROUND_TRIPS[fmt]

    assert from_native(to_native([strict_tool])) == [WEATHER]


@pytest.mark.parametrize("fmt", CHOICE_ROUND_TRIPS)
@pytest.mark.parametrize("choice", CHOICES, ids=["auto", "none", "required", "named"])
def test_tool_choice_round_trip_is_identity(fmt: str, choice: Any) -> None:
    to_native, from_native = CHOICE_ROUND_TRIPS[fmt]
    if fmt == "bedrock" and choice == "none":
        # Converse cannot say "none": the request leaves its tools out instead.
        assert to_native(choice) is None
        assert bedrock.tool_config_to_bedrock([WEATHER], choice) is None
        return

    assert from_native(to_native(choice)) == choice


@pytest.mark.parametrize("fmt", CHOICE_ROUND_TRIPS)
@pytest.mark.parametrize("choice", CHOICES, ids=["auto", "none", "required", "named"])
def test_convert_tool_choice_round_trip(fmt: str, choice: Any) -> None:
    native = convert_tool_choice(choice, fmt)
    if native is None:
        assert (fmt, choice) == ("bedrock", "none")
        return

    assert convert_tool_choice(native, "openai") == choice


def test_strict_survives_the_trip_through_a_tool_definition() -> None:
    from farmhand.tools.formats.detect import to_openai_tools

    tool = {
        "type": "function",
        "function": {"name": "f", "parameters": {"type": "object"}, "strict": True},
    }
    [definition] = to_openai_tools([tool])
    assert definition.strict is True
    assert definition.to_openai()["function"]["strict"] is True
    [plain] = to_openai_tools([{"name": "g", "input_schema": {"type": "object"}}])
    assert "strict" not in plain.to_openai()["function"]
