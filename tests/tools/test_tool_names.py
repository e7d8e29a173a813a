"""Which tool a written name means: the one rule the router, the tool_choice check and the
grammar of a forced call share."""

from __future__ import annotations

import pytest

from farmhand.errors import ProviderError
from farmhand.providers.llamacpp.grammar import find_tool
from farmhand.tools.definition import ToolDefinition, resolve_tool_name

KNOWN = ["filesystem:read_file", "git:read_file", "filesystem:list_directory", "clock"]


@pytest.mark.parametrize(
    ("written", "meant"),
    [
        ("filesystem:read_file", "filesystem:read_file"),  # exact
        ("list_directory", "filesystem:list_directory"),  # the prefix left out, one match
        ("clock", "clock"),
        ("read_file", None),  # two servers have it: the model must say which
        ("write_file", None),
    ],
)
def test_a_name_means_one_tool_or_none(written: str, meant: str | None) -> None:
    assert resolve_tool_name(written, KNOWN) == meant


def test_the_grammar_forces_the_same_tool_the_router_would_run() -> None:
    tools = [ToolDefinition(name, "") for name in KNOWN]
    assert find_tool(tools, "list_directory").name == "filesystem:list_directory"
    with pytest.raises(ProviderError, match="not one of the tools offered"):
        find_tool(tools, "read_file")
