"""farmhand's MCP servers name their version and answer unknown prompts and resources with
the spec's error codes (in-process, both protocol paths)."""

from __future__ import annotations

import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from farmhand.mcpserver.results import RESOURCE_NOT_FOUND, ToolServer
from farmhand.version import farmhand_version

pytestmark = pytest.mark.anyio

INVALID_PARAMS = -32602


def server() -> ToolServer:
    tools = ToolServer("farmhand")

    @tools.prompt()
    def greet(name: str) -> str:
        """Say hello."""
        return f"Hello, {name}"

    return tools


async def test_server_info_carries_farmhands_version() -> None:
    async with Client(server(), mode="legacy") as client:
        assert client.server_info is not None
        assert (client.server_info.name, client.server_info.version) == (
            "farmhand",
            farmhand_version(),
        )


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_an_unknown_prompt_is_invalid_params_and_a_known_one_renders(mode: str) -> None:
    async with Client(server(), mode=mode) as client:
        with pytest.raises(MCPError) as raised:
            await client.get_prompt("nope")
        greeting = await client.get_prompt("greet", {"name": "Ada"})
    assert raised.value.error.code == INVALID_PARAMS
    assert raised.value.error.message == "Unknown prompt: nope"
    assert "Hello, Ada" in str(greeting.messages[0].content)


@pytest.mark.parametrize(
    ("mode", "code"), [("legacy", RESOURCE_NOT_FOUND), ("auto", INVALID_PARAMS)]
)
async def test_an_unknown_resource_gets_the_code_of_the_sessions_revision(
    mode: str, code: int
) -> None:
    """-32002 through 2025-11-25; the 2026-07-28 revision retired it for -32602."""
    async with Client(server(), mode=mode) as client:
        with pytest.raises(MCPError) as raised:
            await client.read_resource("test://nothing-here")
    assert raised.value.error.code == code
    assert "Unknown resource" in raised.value.error.message
