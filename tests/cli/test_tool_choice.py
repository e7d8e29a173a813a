"""Parsing `--tool-choice`, and how `farmhand chat` checks it against the chat's tools (a
named tool given its full `server:tool` name; a name no tool has, or `required` with no
tools, one clear error): through the chat the command runs on the service, scripted model."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest
from tests.support.live import scripted_config

from farmhand.cli.chat import answer, parse_tool_choice
from farmhand.errors import ConfigError
from farmhand.messages import Message
from farmhand.providers.base import GenerationSettings
from farmhand.providers.scripted import ScriptedProvider, Step
from farmhand.service.chat import ChatRequest
from farmhand.service.loaded_models import unbounded_models
from farmhand.service.state import ServiceState
from farmhand.tools.choice import AUTO, REQUIRED, ToolChoice
from farmhand.tools.definition import ToolDefinition

TOOLS = [ToolDefinition("fs:read_file"), ToolDefinition("get_weather")]


async def chosen(home: Path, choice: ToolChoice, tools: Sequence[ToolDefinition]) -> ToolChoice:
    """The tool_choice the model is asked with when `farmhand chat` is given `choice`."""
    provider = ScriptedProvider([Step.text("ok")])
    request = ChatRequest(
        "farm",
        [Message.user("hi")],
        settings=GenerationSettings(tool_choice=choice),
        client_tools=tools,
    )
    async with ServiceState.open(
        scripted_config(), home, provider_factory=lambda _: provider, models=unbounded_models()
    ) as state:
        await answer(state, request, quiet=True)
    return provider.requests[0].settings.tool_choice


@pytest.mark.parametrize("value", ["auto", "none", "required"])
def test_keywords_pass_through(value: str) -> None:
    assert parse_tool_choice(value) == ToolChoice(value)  # type: ignore[arg-type]


def test_a_name_becomes_a_named_choice() -> None:
    assert parse_tool_choice(" get_weather ") == ToolChoice.tool("get_weather")


@pytest.mark.anyio
async def test_names_are_checked_against_the_tools_with_or_without_prefix(
    tmp_path: Path,
) -> None:
    assert await chosen(tmp_path, parse_tool_choice("get_weather"), TOOLS) == parse_tool_choice(
        "get_weather"
    )
    assert await chosen(tmp_path, parse_tool_choice("read_file"), TOOLS) == parse_tool_choice(
        "fs:read_file"
    )
    assert await chosen(tmp_path, AUTO, TOOLS) == AUTO
    with pytest.raises(ConfigError, match="'get_time', which is not one of the tools"):
        await chosen(tmp_path, parse_tool_choice("get_time"), TOOLS)


@pytest.mark.anyio
async def test_required_without_tools_says_how_to_add_some(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="add --tools"):
        await chosen(tmp_path, REQUIRED, [])
    with pytest.raises(ConfigError):
        parse_tool_choice("  ")
