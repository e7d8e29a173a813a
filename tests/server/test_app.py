"""The app's life: graceful shutdown lets an in-flight chat finish, then closes the pool and
the providers."""

from __future__ import annotations

import threading
from collections.abc import AsyncGenerator, Sequence
from pathlib import Path
from typing import Any

import anyio
import httpx
from tests.support.live import LiveServer, pantry_server, scripted_config

from farmhand.assembly import create_app
from farmhand.config.models import ModelConfig
from farmhand.messages import Finish, Message, StreamEvent, TextDelta
from farmhand.providers.base import GenerationSettings, Provider
from farmhand.tools.definition import ToolDefinition


class Gate:
    """A model turn that starts, then waits until the test lets it answer."""

    name = "gate"

    def __init__(self) -> None:
        self.entered = threading.Event()
        self.release = threading.Event()
        self.closed = False

    async def stream(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolDefinition],
        settings: GenerationSettings,
    ) -> AsyncGenerator[StreamEvent, None]:
        self.entered.set()
        await anyio.to_thread.run_sync(self.release.wait, abandon_on_cancel=True)
        yield TextDelta("finished anyway")
        yield Finish("stop")

    async def aclose(self) -> None:
        self.closed = True


def test_shutdown_finishes_in_flight_requests_then_closes_everything(tmp_path: Path) -> None:
    gate = Gate()

    def factory(_: ModelConfig) -> Provider:
        return gate

    app = create_app(
        scripted_config(pantry_server()), home=tmp_path, provider_factory=factory, api_keys=()
    )
    server = LiveServer(app)
    stopping = threading.Event()
    shutdown = server.server.shutdown

    async def noting_shutdown(sockets: Any = None) -> None:
        stopping.set()
        await shutdown(sockets=sockets)

    server.server.shutdown = noting_shutdown  # type: ignore[method-assign]
    replies: list[Any] = []
    with server:
        body = {"model": "farm", "messages": [{"role": "user", "content": "hi"}]}

        def client() -> None:
            response = httpx.post(f"{server.url}/v1/chat/completions", json=body, timeout=60)
            replies.append(response.json())

        caller = threading.Thread(target=client)
        caller.start()
        assert gate.entered.wait(timeout=30)
        pool = app.state.farmhand.pool
        assert pool.connections, "the pantry server should be connected by now"
        server.server.should_exit = True  # what SIGTERM does
        assert stopping.wait(timeout=30)  # uvicorn is shutting down, the chat still runs
        assert not replies
        gate.release.set()
        caller.join(timeout=30)
    assert replies[0]["choices"][0]["message"]["content"] == "finished anyway"
    assert gate.closed
    assert pool.connections == []


def test_the_gate_answers_in_the_dialect_of_the_path(tmp_path: Path) -> None:
    app = create_app(scripted_config(), home=tmp_path, api_keys=["k"], max_body_bytes=100)
    with LiveServer(app) as server:
        key = {"Authorization": "Bearer k"}
        ollama = httpx.get(f"{server.url}/api/tags")
        assert (ollama.status_code, list(ollama.json())) == (401, ["error"])
        assert "Bearer" in ollama.json()["error"]
        openai = httpx.get(f"{server.url}/v1/models", headers={"Authorization": "Basic k"})
        assert openai.status_code == 401
        assert openai.json()["error"]["type"] == "authentication_error"
        big = {"model": "farm", "messages": [{"role": "user", "content": "x" * 200}]}
        too_big = httpx.post(f"{server.url}/api/chat", json=big, headers=key)
        assert (too_big.status_code, list(too_big.json())) == (413, ["error"])
        assert httpx.get(f"{server.url}/api/tags", headers=key).status_code == 200
        missing = httpx.get(f"{server.url}/api/nothing", headers=key)
        assert (missing.status_code, list(missing.json())) == (404, ["error"])
