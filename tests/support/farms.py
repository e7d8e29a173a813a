"""A live farmhand app over a scripted model, and the SDK clients the dialect tests use.

`start` builds the app on a real uvicorn (`LiveServer`) with one `Relay` as every model's
provider; a test sets `relay.script` to the turns the model plays. `Farm` holds an OpenAI
client, `AnthropicFarm` an Anthropic one, both with a plain httpx client beside it.
"""

from __future__ import annotations

import time
from collections.abc import AsyncGenerator, Sequence
from pathlib import Path
from typing import Any

import httpx
from anthropic import Anthropic
from openai import OpenAI
from tests.support.live import LiveServer, scripted_config

from farmhand.assembly import create_app
from farmhand.config.models import FarmhandConfig
from farmhand.messages import Message, StreamEvent
from farmhand.providers.base import GenerationSettings
from farmhand.providers.scripted import ScriptedProvider
from farmhand.service.state import ServiceState
from farmhand.tools.definition import ToolDefinition

USER = [{"role": "user", "content": "hello"}]


class Relay:
    """The provider the server builds once: plays the test's script, and counts tokens as
    one per word of every message and tool (a test double for a real tokenizer)."""

    name = "relay"

    def __init__(self) -> None:
        self.script = ScriptedProvider()
        self.counted: list[tuple[list[Message], list[str]]] = []

    def stream(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolDefinition],
        settings: GenerationSettings,
    ) -> AsyncGenerator[StreamEvent, None]:
        return self.script.stream(messages, tools, settings)

    async def count_tokens(
        self, messages: Sequence[Message], tools: Sequence[ToolDefinition]
    ) -> int:
        self.counted.append((list(messages), [t.name for t in tools]))
        words = sum(len(m.content.split()) for m in messages)
        return words + sum(len(t.description.split()) for t in tools)

    async def aclose(self) -> None:
        await self.script.aclose()


def start(
    home: Path,
    config: FarmhandConfig | None = None,
    *,
    keys: Sequence[str] = (),
    max_body_bytes: int | None = None,
) -> tuple[LiveServer, Relay]:
    """The app for `config` (default: one scripted model, no MCP servers), not yet running:
    enter the LiveServer to serve it."""
    relay = Relay()
    app = create_app(
        config or scripted_config(),
        home=home,
        provider_factory=lambda _: relay,
        api_keys=keys,
        max_body_bytes=max_body_bytes,
    )
    return LiveServer(app), relay


def settle(state: ServiceState, seconds: float = 60) -> None:
    """Wait until none of the service's chats runs (a parked one ends when its question
    times out, a cancelled one at once)."""
    runner = state.chat_runner()
    deadline = time.monotonic() + seconds
    while runner.running and time.monotonic() < deadline:
        time.sleep(0.05)


class Farm:
    """A running server with a scripted model, asked through the `openai` SDK."""

    def __init__(self, server: LiveServer, provider: ScriptedProvider, key: str = "") -> None:
        self.server = server
        self.script = provider
        self.client = OpenAI(base_url=f"{server.url}/v1", api_key=key or "unused", max_retries=0)
        self.http = httpx.Client(base_url=server.url, timeout=30)


class AnthropicFarm:
    """A running server with a scripted model, asked through the `anthropic` SDK."""

    def __init__(self, server: LiveServer, relay: Relay, key: str = "unused") -> None:
        self.server = server
        self.relay = relay
        self.script = relay.script
        self.client = Anthropic(base_url=server.url, api_key=key, max_retries=0)
        self.http = httpx.Client(base_url=server.url, timeout=30, headers={"x-api-key": key})

    def ask(self, messages: Any = None, **extra: Any) -> Any:
        extra.setdefault("max_tokens", 100)
        return self.client.messages.create(model="farm", messages=messages or USER, **extra)
