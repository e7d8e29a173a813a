"""A live `farmhand serve` app for the browser tests: a scripted model (`PageModel`), the
real filesystem MCP server over a folder of three files, and the asking test server twice
(`gate` wants every call approved, `ask` asks its own questions). One app and one headless
chromium per module; a fresh page per test, checked for console errors at its end."""

from __future__ import annotations

import sys
import threading
from collections.abc import AsyncGenerator, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import anyio
import pytest
from playwright.sync_api import Browser, Page
from tests.support.browser import Watched, headless_chromium, screenshot_dir, watched_page
from tests.support.live import LiveServer, scripted_config

from farmhand.assembly import create_app
from farmhand.config.models import McpServerConfig, ModelConfig
from farmhand.messages import Message, StreamEvent, TextDelta, ToolCallDelta
from farmhand.providers.base import GenerationSettings, Provider
from farmhand.providers.scripted import ScriptedProvider
from farmhand.service.state import ServiceState
from farmhand.tools.definition import ToolDefinition
from farmhand.toolsets.mcp.known_servers import filesystem_server

ASKING = Path(__file__).parents[1] / "toolsets" / "mcp" / "servers" / "asking_server.py"
QUESTION_TIMEOUT = 30.0


class PageModel:
    """The model behind every chat: plays `script`, or, while `hold` is set, writes a few
    words and then waits until its turn is cancelled (which it records). With
    `pause_in_arguments` set, it stops after the first piece of a call's arguments until
    `resume` is set, so a test can look at a call being written."""

    name = "page-model"

    def __init__(self) -> None:
        self.script = ScriptedProvider()
        self.hold = False
        self.waiting = threading.Event()
        self.cancelled = threading.Event()
        self.pause_in_arguments = False
        self.resume = threading.Event()

    async def stream(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolDefinition],
        settings: GenerationSettings,
    ) -> AsyncGenerator[StreamEvent, None]:
        if not self.hold:
            async for event in self.script.stream(messages, tools, settings):
                yield event
                if self.pause_in_arguments and isinstance(event, ToolCallDelta) and event.arguments:
                    self.pause_in_arguments = False
                    self.waiting.set()
                    while not self.resume.is_set():
                        await anyio.sleep(0.02)
            return
        yield TextDelta("Counting the sheep, ")
        self.waiting.set()
        try:
            await anyio.sleep_forever()
        except anyio.get_cancelled_exc_class():
            self.cancelled.set()
            raise

    async def aclose(self) -> None:
        await self.script.aclose()


def asking(name: str, **extra: object) -> McpServerConfig:
    return McpServerConfig.model_validate(
        {"name": name, "command": sys.executable, "args": [str(ASKING)], **extra}
    )


@dataclass
class Playground:
    server: LiveServer
    state: ServiceState
    model: PageModel
    folder: Path
    shots: Path


@pytest.fixture(scope="module")
def playground(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Playground]:
    folder = tmp_path_factory.mktemp("farm")
    for name, text in [("barn.txt", "hay"), ("silo.txt", "grain"), ("pond.txt", "ducks")]:
        (folder / name).write_text(text)
    config = scripted_config(
        filesystem_server(folder, "fs"), asking("gate", require_approval="always"), asking("ask")
    )
    config.server.question_timeout = QUESTION_TIMEOUT
    model = PageModel()

    def factory(_: ModelConfig) -> Provider:
        return model

    app = create_app(config, home=tmp_path_factory.mktemp("home"), provider_factory=factory)
    shots = screenshot_dir(tmp_path_factory.mktemp("screenshots"))
    with LiveServer(app) as server:
        yield Playground(server, app.state.farmhand, model, folder.resolve(), shots)


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with headless_chromium() as browser:
        yield browser


@pytest.fixture
def watched(browser: Browser, playground: Playground) -> Iterator[Watched]:
    playground.model.script = ScriptedProvider()
    playground.model.hold = False
    playground.model.pause_in_arguments = False
    playground.model.resume.set()  # nothing stays paused after a test
    watched = watched_page(browser)
    yield watched
    watched.page.context.close()
    playground.model.script.assert_done()
    assert watched.errors == [], watched.errors


@pytest.fixture
def page(watched: Watched, playground: Playground) -> Page:
    """The playground, loaded, its model list and tools in place."""
    watched.page.goto(playground.server.url + "/")
    watched.page.wait_for_selector("#model option", state="attached")
    watched.page.wait_for_selector("#tools .tool-entry")
    return watched.page
