"""A live app over a scripted model, one per test module, for the dialect tests.

`farm` is an OpenAI-client farm and `anthropic_farm` an Anthropic-client one; each resets
the script for its test and checks afterwards that every scripted turn was played. A module
that needs other servers in its config, or another client, defines its own `shared`/`farm`.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from tests.support.farms import AnthropicFarm, Farm, Relay, start
from tests.support.live import LiveServer, scripted_config

from farmhand.providers.scripted import ScriptedProvider


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LiveServer, Relay]]:
    server, relay = start(tmp_path_factory.mktemp("home"), scripted_config())
    with server:
        yield server, relay


@pytest.fixture
def farm(shared: tuple[LiveServer, Relay]) -> Iterator[Farm]:
    server, relay = shared
    relay.script = ScriptedProvider()
    yield Farm(server, relay.script)
    relay.script.assert_done()


@pytest.fixture(scope="module")
def anthropic_shared(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[LiveServer, Relay]]:
    server, relay = start(tmp_path_factory.mktemp("home"))
    with server:
        yield server, relay


@pytest.fixture
def anthropic_farm(
    anthropic_shared: tuple[LiveServer, Relay],
) -> Iterator[AnthropicFarm]:
    server, relay = anthropic_shared
    relay.script = ScriptedProvider()
    yield AnthropicFarm(server, relay)
    relay.script.assert_done()
