"""A served chat closes every async generator it opens: none is left for asyncio to close
with a task of its own (see tests/support/generators.py), the cost that made a whole
(non-streamed) answer spend a third of farmhand's own time per request."""

from __future__ import annotations

from contextlib import aclosing
from pathlib import Path
from typing import Any

import httpx
import pytest
from tests.support.generators import left_to_asyncio
from tests.support.live import scripted_config

from farmhand.assembly import create_app
from farmhand.messages import Message
from farmhand.providers.scripted import ScriptedProvider, Step
from farmhand.runtime.events import TextChunk
from farmhand.server.dialect_registry import DIALECTS
from farmhand.service.chat import ChatRequest, complete_chat, run_chat
from farmhand.service.state import ServiceState
from farmhand.toolsets.mcp.pool import MCPPool

pytestmark = pytest.mark.anyio

ASK = [{"role": "user", "content": "Hi"}]
REQUESTS: dict[str, tuple[str, dict[str, Any]]] = {
    "chat completions": ("/v1/chat/completions", {"model": "scripted", "messages": ASK}),
    "messages": ("/v1/messages", {"model": "scripted", "max_tokens": 64, "messages": ASK}),
    "responses": ("/v1/responses", {"model": "scripted", "input": "Hi", "store": False}),
    "ollama chat": ("/api/chat", {"model": "scripted", "messages": ASK}),
    "ollama generate": ("/api/generate", {"model": "scripted", "prompt": "Hi"}),
}


async def test_a_whole_answer_reads_the_chat_to_its_end(tmp_path: Path) -> None:
    provider = ScriptedProvider([Step.text("Hello there.")])
    state = ServiceState(
        config=scripted_config(), home=tmp_path, pool=MCPPool(), provider_factory=lambda _: provider
    )
    with left_to_asyncio() as left:
        request = ChatRequest(messages=[Message.user("Hi")], model="farm")
        outcome = await complete_chat(state, request)
    assert outcome.finished.answer == "Hello there."
    assert left == []


async def test_a_reader_that_leaves_early_closes_every_layer(tmp_path: Path) -> None:
    # A client that disconnects mid-answer: the chat, the loop and the provider's stream are
    # each closed by their reader (the embedded model is held until its stream ends).
    provider = ScriptedProvider([Step.text("Hello there, this is a long answer.")])
    state = ServiceState(
        config=scripted_config(), home=tmp_path, pool=MCPPool(), provider_factory=lambda _: provider
    )
    request = ChatRequest(messages=[Message.user("Hi")], model="farm")
    seen: list[str] = []
    with left_to_asyncio() as left:
        async with aclosing(run_chat(state, request)) as events:
            async for event in events:
                if isinstance(event, TextChunk):
                    seen.append(event.text)
                    break
    assert seen == ["Hello "]
    assert left == []


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize("dialect", list(REQUESTS))
async def test_every_dialect_closes_what_it_reads(
    dialect: str, stream: bool, tmp_path: Path
) -> None:
    provider = ScriptedProvider([Step.text("Hello there.")])
    config = scripted_config(models=("scripted",))
    app = create_app(config, home=tmp_path, provider_factory=lambda _: provider, api_keys=[])
    path, body = REQUESTS[dialect]
    transport = httpx.ASGITransport(app=app)
    client = httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1")
    async with app.router.lifespan_context(app), client:
        with left_to_asyncio() as left:
            answer = await client.post(path, json={**body, "stream": stream})
    assert answer.status_code == 200, answer.text
    assert "Hello" in answer.text
    assert left == []
    provider.assert_done()


def test_every_registered_dialect_is_in_the_table() -> None:
    # A dialect added to the registry is checked here too, or this fails.
    for dialect in DIALECTS:
        assert any(dialect.owns(path) for path, _ in REQUESTS.values()), dialect.name
