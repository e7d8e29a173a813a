"""Parsing and checking `--tool-choice`."""

from __future__ import annotations

import pytest

from farmhand.cli.chat import check_tool_choice, parse_tool_choice
from farmhand.errors import ConfigError
from farmhand.tools.choice import AUTO, REQUIRED, ToolChoice
from farmhand.tools.definition import ToolDefinition

TOOLS = [ToolDefinition("fs:read_file"), ToolDefinition("get_weather")]


@pytest.mark.parametrize("value", ["auto", "none", "required"])
def test_keywords_pass_through(value: str) -> None:
    assert parse_tool_choice(value) == ToolChoice(value)  # type: ignore[arg-type]


def test_a_name_becomes_a_named_choice() -> None:
    assert parse_tool_choice(" get_weather ") == ToolChoice.tool("get_weather")


def test_names_are_checked_against_the_tools_with_or_without_prefix() -> None:
    assert check_tool_choice(parse_tool_choice("get_weather"), TOOLS) == parse_tool_choice(
        "get_weather"
    )
    assert check_tool_choice(parse_tool_choice("read_file"), TOOLS) == parse_tool_choice(
        "fs:read_file"
    )
    assert check_tool_choice(AUTO, TOOLS) == AUTO
    with pytest.raises(ConfigError, match="'get_time', which is not one of the tools"):
        check_tool_choice(parse_tool_choice("get_time"), TOOLS)


def test_required_without_tools_says_how_to_add_some() -> None:
    with pytest.raises(ConfigError, match="add --tools"):
        check_tool_choice(REQUIRED, [])
    with pytest.raises(ConfigError):
        parse_tool_choice("  ")
