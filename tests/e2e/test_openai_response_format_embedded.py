"""Chat Completions `response_format` with the real embedded model (Qwen2.5-Coder-1.5B,
greedy) behind a live app: `chat.completions.parse` with a pydantic model gets an answer
that the SDK reads into that model, since the schema constrains what the model writes."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from openai import OpenAI
from pydantic import BaseModel
from tests.support.live import LiveServer

from farmhand.assembly import create_app
from farmhand.config.models import FarmhandConfig

pytestmark = pytest.mark.e2e


class Animal(BaseModel):
    animal: str
    legs: int


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[OpenAI]:
    config = FarmhandConfig.model_validate(
        {"runtime": {"models": [{"name": "qwen", "provider": "llamacpp"}]}}
    )
    app = create_app(config, home=tmp_path_factory.mktemp("home"), api_keys=())
    with LiveServer(app) as server:
        yield OpenAI(base_url=f"{server.url}/v1", api_key="x", max_retries=0, timeout=600)


def test_parse_gets_an_answer_in_the_schema(client: OpenAI) -> None:
    reply = client.chat.completions.parse(
        model="qwen",
        messages=[
            {"role": "system", "content": "Answer in JSON."},
            {"role": "user", "content": "Name a farm animal and how many legs it has."},
        ],
        response_format=Animal,
        max_tokens=40,
        temperature=0,
    )
    message = reply.choices[0].message
    assert reply.choices[0].finish_reason == "stop", message.content
    assert isinstance(message.parsed, Animal), message.content
    assert message.parsed.animal.strip() and message.parsed.legs >= 0


def test_json_mode_gets_a_json_object(client: OpenAI) -> None:
    reply = client.chat.completions.create(
        model="qwen",
        messages=[{"role": "user", "content": "Give the colour of the sky as JSON."}],
        response_format={"type": "json_object"},
        max_tokens=40,
        temperature=0,
    )
    answer = json.loads(reply.choices[0].message.content or "")
    assert isinstance(answer, dict)
