"""A served chat's tool settings: the request's where it sets them, else the operator's
`runtime:` section (not a default of the API dialect's own)."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.support.live import pantry_server, scripted_config

from farmhand.messages import Message
from farmhand.providers.scripted import ScriptedProvider, Step
from farmhand.service.chat import ChatRequest, complete_chat
from farmhand.service.state import ServiceState
from farmhand.toolsets.mcp.pool import MCPPool

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize(("asked", "connected"), [(None, ["pantry"]), (False, [])])
async def test_eager_jit_connection_comes_from_the_config_unless_the_request_says(
    tmp_path: Path, asked: bool | None, connected: list[str]
) -> None:
    config = scripted_config(pantry_server())
    runtime = config.runtime.model_copy(update={"jit_tools": True, "jit_connect_eager": True})
    config = config.model_copy(update={"runtime": runtime})
    provider = ScriptedProvider([Step.text("Hello.")])  # answers without discovering
    state = ServiceState(config, tmp_path, MCPPool(), provider_factory=lambda _: provider)
    request = ChatRequest(messages=[Message.user("Hi")], model="farm", jit_connect_eager=asked)
    async with state.pool:
        outcome = await complete_chat(state, request)
        # Eager: the server was started before the model's first turn; lazy: never asked for.
        assert [c.name for c in state.pool.connections] == connected
    assert outcome.finished.answer == "Hello."
