"""Python functions as tools: their schema from the signature, their docstring as the
description, sync ones in a worker thread, async ones awaited, results as text or JSON,
and the mistakes a caller can make named."""

from __future__ import annotations

import threading
from dataclasses import dataclass

import pytest

from farmhand.errors import ConfigError
from farmhand.toolsets.functions import FunctionToolset

pytestmark = pytest.mark.anyio


@dataclass
class Parcel:
    country: str
    days: int


def where_it_runs() -> str:
    """The thread the function runs in."""
    return threading.current_thread().name


async def track(code: str, countries: list[str] | None = None) -> list[Parcel]:
    """Where parcel `code` goes."""
    return [Parcel(c, 2) for c in countries or ["NO"]]


async def test_functions_are_listed_and_called_as_tools() -> None:
    toolset = FunctionToolset([where_it_runs, track])
    tools = {t.name: t for t in await toolset.list_tools()}
    assert list(tools) == ["where_it_runs", "track"]
    assert tools["track"].description == "Where parcel `code` goes."
    assert tools["track"].parameters["required"] == ["code"]
    assert tools["track"].parameters["properties"]["code"]["type"] == "string"
    ran = await toolset.call_tool("where_it_runs", {})
    assert ran.text != threading.current_thread().name  # not on the event loop's thread
    tracked = await toolset.call_tool("track", {"code": "A1", "countries": ["NO", "CL"]})
    assert not tracked.is_error
    assert tracked.text == '[{"country": "NO", "days": 2}, {"country": "CL", "days": 2}]'


async def test_a_call_the_signature_refuses_is_an_error_naming_the_argument() -> None:
    toolset = FunctionToolset([track])
    refused = await toolset.call_tool("track", {"code": ["not", "text"]})
    assert refused.is_error
    assert refused.text.startswith("wrong arguments for track: code: ")
    unknown = await toolset.call_tool("trace", {})
    assert unknown.is_error and "no tool called 'trace'" in unknown.text


def test_what_cannot_be_a_tool_says_why() -> None:
    with pytest.raises(ConfigError, match="needs a name"):
        FunctionToolset([lambda: 1])
    with pytest.raises(ConfigError, match="two tools are called 'track'"):
        FunctionToolset([track, track])
