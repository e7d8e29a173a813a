"""A model served by several deployments, as a client and an operator meet it: the
`openai` SDK against farmhand over real uvicorn, the deployments fake OpenAI-compatible
servers (real sockets), one of them a port nothing listens on. A refused deployment is
stepped around and `/api/ps` says so; when every deployment fails the answer is a 503 with
Retry-After that says how many there are and when the next is tried (inside the stream,
for a streamed request, whose 200 went out when the chat began)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route
from tests.support.live import LiveServer
from tests.support.real_servers import free_port

from farmhand.assembly import create_app
from farmhand.config.models import FarmhandConfig
from farmhand.providers.backend_errors import BackendFailure
from farmhand.providers.openai_compat import OpenAICompatProvider


class Deployment:
    """An OpenAI-compatible server answering every chat with a short stream, or with
    `status` (and Retry-After: 7) when one is set."""

    def __init__(self, status: int | None = None, models_status: int = 200) -> None:
        self.status = status
        self.models_status = models_status
        self.chats = 0
        self.checks: list[str] = []  # the Authorization of each health check
        self.app = Starlette(
            routes=[
                Route("/v1/chat/completions", self.chat, methods=["POST"]),
                Route("/v1/models", self.models, methods=["GET"]),
            ]
        )

    async def models(self, request: Request) -> Response:
        self.checks.append(request.headers.get("authorization", ""))
        listed = {"object": "list", "data": [{"id": "x", "object": "model"}]}
        return JSONResponse(listed, status_code=self.models_status)

    async def chat(self, request: Request) -> Response:
        self.chats += 1
        if self.status is not None:
            return JSONResponse(
                {"error": {"message": "busy"}},
                status_code=self.status,
                headers={"Retry-After": "7"},
            )

        async def events() -> AsyncIterator[str]:
            for piece in ("Hello", " from", " the pool"):
                chunk = {"choices": [{"index": 0, "delta": {"content": piece}}]}
                yield f"data: {json.dumps(chunk)}\n\n"
            done = {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
            yield f"data: {json.dumps(done)}\n\ndata: [DONE]\n\n"

        return StreamingResponse(events(), media_type="text/event-stream")


def served(home: Path, *urls: str) -> LiveServer:
    model = {"name": "m", "provider": "openai", "model": "x", "api_key": "k"}
    deployments = [{"base_url": url} for url in urls]
    config = FarmhandConfig.model_validate(
        {"runtime": {"models": [{**model, "deployments": deployments}]}}
    )
    return LiveServer(create_app(config, home=home, api_keys=()))


def client(url: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=url + "/v1", api_key="none", max_retries=0)


def ask(url: str) -> str:
    stream = client(url).chat.completions.create(
        model="m", messages=[{"role": "user", "content": "hi"}], stream=True
    )
    return "".join(chunk.choices[0].delta.content or "" for chunk in stream if chunk.choices)


def deployments_in_ps(url: str) -> list[dict[str, Any]]:
    (entry,) = httpx.get(url + "/api/ps").json()["models"]
    listed: list[dict[str, Any]] = entry["farmhand"]["deployments"]
    return listed


def test_a_refused_deployment_is_stepped_around_and_ps_shows_it(tmp_path: Path) -> None:
    good = Deployment()
    refused = f"http://127.0.0.1:{free_port()}/v1"
    with LiveServer(good.app) as backend, served(tmp_path, refused, backend.url + "/v1") as farm:
        assert ask(farm.url) == "Hello from the pool"
        first, second = deployments_in_ps(farm.url)
        assert ask(farm.url) == "Hello from the pool"  # while it cools, the other serves
        after = deployments_in_ps(farm.url)
    assert first["url"] == refused and first["state"] == "cooling"
    assert first["failures"] == 1 and first["sent"] == 1 and first["served"] == 0
    assert first["last_error"] == "the model's backend could not be reached"
    assert first["cooling_until"] is not None
    assert second == {
        "url": backend.url + "/v1",
        "weight": 1.0,
        "state": "healthy",
        "in_flight": 0,
        "sent": 1,
        "served": 1,
        "failures_in_a_row": 0,
        "failures": 0,
        "cooling_until": None,
        "last_error": "",
    }
    assert after[1]["served"] == 2 and after[0]["sent"] == 1
    assert good.chats == 2


def test_when_every_deployment_fails_the_answer_is_a_503_with_retry_after(
    tmp_path: Path,
) -> None:
    one, two = Deployment(status=503), Deployment(status=429)
    with (
        LiveServer(one.app) as a,
        LiveServer(two.app) as b,
        served(tmp_path, a.url + "/v1", b.url + "/v1") as farm,
    ):
        with pytest.raises(openai.InternalServerError) as caught:
            client(farm.url).chat.completions.create(
                model="m", messages=[{"role": "user", "content": "hi"}]
            )
        states = [d["state"] for d in deployments_in_ps(farm.url)]
        # A stream has said 200 before the model's turn began: the same error comes in it.
        with pytest.raises(openai.APIError, match="none of its 2 deployments can take"):
            ask(farm.url)
    error = caught.value
    assert error.status_code == 503
    assert error.response.headers["retry-after"] == "7"  # what the backends asked
    assert "none of its 2 deployments can take the request" in error.message
    assert "the next is tried again in 7.0 s" in error.message
    assert (one.chats, two.chats) == (1, 1)  # each tried once, and not while cooling
    assert states == ["cooling", "cooling"]


async def probe(url: str, api_key: str | None = None) -> None:
    provider = OpenAICompatProvider(url, "x", api_key)
    try:
        await provider.probe(5)
    finally:
        await provider.aclose()


@pytest.mark.anyio
async def test_the_health_check_asks_for_the_models_with_the_deployments_key() -> None:
    up, unauthorized = Deployment(), Deployment(models_status=401)
    overloaded = Deployment(models_status=503)
    with (
        LiveServer(up.app) as a,
        LiveServer(overloaded.app) as b,
        LiveServer(unauthorized.app) as c,
    ):
        for server in (a, c):  # a 401 is a server that is up (the key is another matter)
            await probe(server.url + "/v1", "k1")
        with pytest.raises(BackendFailure) as busy:
            await probe(b.url + "/v1", "k1")
        with pytest.raises(BackendFailure) as refused:
            await probe(f"http://127.0.0.1:{free_port()}/v1")
    assert up.checks == ["Bearer k1"] and up.chats == 0
    assert busy.value.status == 503 and busy.value.backend_down
    assert "answered HTTP 503 to a health check" in str(busy.value)
    assert refused.value.kind == "connect" and refused.value.backend_down
