"""The A2A agent with the real embedded model (Qwen2.5-Coder-1.5B, greedy) behind a live
`farmhand serve`, asked by the official `a2a-sdk` client: the card names the model, and a
streamed message is answered by it, the answer arriving in artifact chunks and then whole,
bounded by the request's `max_tokens`."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import httpx
import pytest
from a2a.client import A2ACardResolver, ClientConfig, create_client
from a2a.types.a2a_pb2 import GetTaskRequest, Message, Part, Role, SendMessageRequest, TaskState
from google.protobuf.json_format import MessageToDict
from tests.support.live import LiveServer

from farmhand.assembly import create_app
from farmhand.config.models import FarmhandConfig

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]
MAX_TOKENS = 16


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    config = FarmhandConfig.model_validate(
        {"runtime": {"models": [{"name": "qwen", "provider": "llamacpp"}]}}
    )
    app = create_app(config, home=tmp_path_factory.mktemp("home"), api_keys=())
    with LiveServer(app) as live:
        yield live


async def test_the_embedded_model_answers_a_streamed_message(server: LiveServer) -> None:
    message = Message(
        role=Role.ROLE_USER,
        message_id=uuid.uuid4().hex,
        parts=[Part(text="What is the capital of France? Answer in one short sentence.")],
    )
    request = SendMessageRequest(message=message)
    request.metadata.update({"model": "qwen", "max_tokens": MAX_TOKENS, "temperature": 0})
    async with httpx.AsyncClient(timeout=600) as http:
        card = await A2ACardResolver(http, server.url).get_agent_card()
        assert [s.id for s in card.skills] == ["model:qwen"]
        config = ClientConfig(streaming=True, httpx_client=http)
        async with await create_client(server.url, config) as client:
            events = [e async for e in client.send_message(request)]
            task_id = events[0].task.id
            task = await client.get_task(GetTaskRequest(id=task_id))
    chunks = [e.artifact_update for e in events if e.HasField("artifact_update")]
    streamed = "".join(p.text for c in chunks[:-1] for p in c.artifact.parts)
    assert len(chunks) >= 2 and chunks[-1].last_chunk and streamed  # pieces, then the whole
    assert task.status.state == TaskState.TASK_STATE_COMPLETED
    (answer,) = [a for a in task.artifacts if a.artifact_id == "answer"]
    text = "".join(p.text for p in answer.parts)
    assert "Paris" in text and text.startswith(streamed)
    usage = MessageToDict(task.metadata)["usage"]
    assert 0 < usage["completion_tokens"] <= MAX_TOKENS
