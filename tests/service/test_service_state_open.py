"""The service is built and run in one place: every face's state has the same pool bounds,
question timeout and model budget from the config, runs its parts while open and closes
them after, and a failure of the block leaves it as itself."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from tests.support.live import scripted_config

from farmhand.assembly import create_app, service_for
from farmhand.config.models import FarmhandConfig
from farmhand.errors import ConfigError
from farmhand.providers.scripted import ScriptedProvider
from farmhand.runtime.events import LoopEvent
from farmhand.service.state import ServiceState

pytestmark = pytest.mark.anyio


def bounded_config() -> FarmhandConfig:
    config = scripted_config()
    server = config.server.model_copy(
        update={
            "question_timeout": 42.0,
            "request_servers": config.server.request_servers.model_copy(
                update={"max_alive": 3, "idle_timeout": 17.0}
            ),
            "engine": config.server.engine.model_copy(update={"memory_mib": 1234}),
        }
    )
    return config.model_copy(update={"server": server})


def bounds(state: ServiceState) -> tuple[int, float, float, int]:
    pool = state.pool
    budget = state.models.budget
    return pool.max_request_servers, pool.request_idle_timeout, state.answers.timeout, budget


def test_every_face_builds_its_state_with_the_configs_bounds(tmp_path: Path) -> None:
    config = bounded_config()
    expected = (3, 17.0, 42.0, 1234 * 1024 * 1024)
    served = create_app(config, home=tmp_path, api_keys=[]).state.farmhand
    stdio = service_for(config, home=tmp_path, over_http=False).state  # `farmhand mcp serve`
    assert bounds(served) == bounds(stdio) == bounds(ServiceState.for_config(config)) == expected


async def test_open_runs_the_pool_and_the_chat_runner_and_closes_them(tmp_path: Path) -> None:
    async def no_events(asker: object) -> AsyncIterator[LoopEvent]:
        return
        yield

    provider = ScriptedProvider([])
    async with ServiceState.open(
        scripted_config(), tmp_path, provider_factory=lambda _: provider
    ) as state:
        state.chat_runner().start(no_events)  # open: it takes chats
        assert state.pool.connections == []  # nothing started before it is used
        await state.provider(state.model_config("farm"))
        assert [m.config.name for m in state.loaded()] == ["farm"]
    assert state.loaded() == []  # the providers were closed with the service
    with pytest.raises(RuntimeError, match="chat runner is not open"):
        state.chat_runner().start(no_events)


async def test_a_failure_in_the_block_leaves_as_itself(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="the caller's mistake"):
        async with ServiceState.open(scripted_config(), tmp_path):
            raise ConfigError("the caller's mistake")
