"""What the attack tests share: a real `farmhand serve` app under uvicorn whose model only
records that it was asked (so "nothing ran" is something a test can check), and the JSON
routes every attack is replayed against."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from tests.support.live import LiveServer, scripted_config

from farmhand.assembly import create_app
from farmhand.config.models import FarmhandConfig, ModelConfig
from farmhand.messages import Finish, Message, StreamEvent, TextDelta
from farmhand.providers.base import GenerationSettings, Provider
from farmhand.tools.definition import ToolDefinition

CHAT = {"model": "farm", "messages": [{"role": "user", "content": "hi"}]}
# Every route that takes a JSON body, with a body it would act on.
JSON_ROUTES: dict[str, dict[str, Any]] = {
    "/v1/chat/completions": CHAT,
    "/api/chat": {**CHAT, "stream": False},
    "/api/tools/search": {"pattern": "*"},
    "/api/generate": {"model": "farm", "prompt": "hi", "stream": False},
    "/api/show": {"model": "farm"},
    "/api/embed": {"model": "farm", "input": "hi"},
    "/api/pull": {"model": "no-such-model", "stream": False},
    "/v1/projects/default": {"name": "planted"},
    "/v1/projects/default/demo/chat/completions": CHAT,
}


# Shapes a client may send that once broke the server (issue 25), for the fuzz runs: numbers
# too large for a float or a 64-bit integer, URLs the parser refuses, YAML tags and dates in
# configs, templates and lists nested deep.
HUGE_INTEGERS = [10**400, -(10**400), 2**64, 10**20]
BAD_URLS = [
    "http://127.0.0.1:99999/mcp", "http://[::1/mcp", "http://:47415:1/mcp", "ftp://host/x",
    "http://", "//host/x", "http://127.0.0.1:0/x",
]  # fmt: skip
YAML_TEXTS = [
    "rag: !!binary aGVsbG8=\n", "rag: !!set {a, b}\n", "rag:\n  2024-01-01: 2025-02-03\n",
    "rag: !!python/object/apply:os.system [id]\n", "rag: " + "[" * 900 + "]" * 900 + "\n",
    "{}", "{version: v1}", "name: p\n\n",
]  # fmt: skip
TEMPLATES = [
    "{{ if .Prompt }}" * 1500 + "{{ end }}" * 1500, "{{.Prompt}}" * 20_000, "{{ end }}",
]  # fmt: skip
NAMES = ["p\n", "p%0A", "..", "a" * 100, "p/q"]


def nested_lists(levels: int) -> list[Any]:
    value: list[Any] = []
    for _ in range(levels - 1):
        value = [value]
    return value


HOSTILE_VALUES: list[Any] = [
    *HUGE_INTEGERS, *BAD_URLS, *YAML_TEXTS, *TEMPLATES, *NAMES,
    nested_lists(60), {"url": BAD_URLS[0], "name": "x"}, [{"name": "x", "url": BAD_URLS[1]}],
]  # fmt: skip
"""Every shape above, as a value to put in any field."""


class EchoModel:
    """A model that answers "ok" to anything and remembers every turn it was asked for."""

    name = "echo"

    def __init__(self) -> None:
        self.turns: list[Sequence[Message]] = []
        self.tools: list[list[str]] = []  # the tool names each turn was offered
        self.settings: list[GenerationSettings] = []  # and its settings

    async def stream(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolDefinition],
        settings: GenerationSettings,
    ) -> AsyncGenerator[StreamEvent, None]:
        self.turns.append(messages)
        self.tools.append([t.name for t in tools])
        self.settings.append(settings)
        yield TextDelta("ok")
        yield Finish("stop")

    async def aclose(self) -> None:
        return None


class Farm:
    """A live server, its model, and its home folder."""

    def __init__(self, server: LiveServer, model: EchoModel, home: Path) -> None:
        self.server = server
        self.url = server.url
        self.model = model
        self.home = home


def serve(
    home: Path, config: FarmhandConfig | None = None, *, keys: Sequence[str] = ()
) -> tuple[LiveServer, EchoModel]:
    model = EchoModel()

    def factory(_: ModelConfig) -> Provider:
        return model

    app = create_app(
        config or scripted_config(), home=home, provider_factory=factory, api_keys=keys
    )
    return LiveServer(app), model


@pytest.fixture
def farm(tmp_path: Path) -> Iterator[Farm]:
    server, model = serve(tmp_path)
    with server:
        yield Farm(server, model, tmp_path)
