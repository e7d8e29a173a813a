"""A project written over the API cannot reach a host nobody allowed by listing it among
a model's `deployments` instead of as its `base_url`: every deployment passes
`server.backend_hosts`, when the project is written and when a chat uses it, and what
such backends say when they fail stays out of the answer. Replayed over real uvicorn
against loopback listeners that record what reached them (`test_project_backends.py`'s)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
from starlette.responses import PlainTextResponse
from tests.security.test_project_backends import CHAT, SECRET, Listener, farmhand
from tests.support.live import LiveServer

from farmhand.service.projects import API_MARKER


def pooled(*urls: str) -> dict[str, Any]:
    model = {"name": "m", "provider": "openai", "model": "x", "api_key": "client-chosen"}
    deployments = [{"base_url": url} for url in urls]
    return {"runtime": {"models": [{**model, "deployments": deployments}]}}


def chat_over_two_deployments(
    tmp_path: Path, first: Listener, second: Listener
) -> tuple[httpx.Response, list[int]]:
    """A chat through a project written over the API whose model is pooled over two allowed
    listeners, and the listeners' ports."""
    with (
        LiveServer(first.app) as one,
        LiveServer(second.app) as two,
        farmhand(
            tmp_path, backend_hosts=[f"127.0.0.1:{one.port}", f"127.0.0.1:{two.port}"]
        ) as farm,
    ):
        config = pooled(one.url + "/v1", two.url + "/v1")
        written = httpx.post(
            farm.url + "/v1/projects/default", json={"name": "p", "config": config}
        )
        assert written.status_code == 200, written.text
        chat = httpx.post(farm.url + "/v1/projects/default/p/chat/completions", json=CHAT)
        return chat, [one.port, two.port]


def test_a_deployment_to_a_host_nobody_allowed_is_refused(tmp_path: Path) -> None:
    allowed, internal = Listener(), Listener()
    with (
        LiveServer(allowed.app) as good,
        LiveServer(internal.app) as target,
        farmhand(tmp_path, backend_hosts=[f"127.0.0.1:{good.port}"]) as farm,
    ):
        hidden = f"{target.url}/admin/delete-all?x="
        written = httpx.post(
            farm.url + "/v1/projects/default",
            json={"name": "p", "config": pooled(good.url + "/v1", hidden)},
        )
        assert written.status_code == 403, written.text
        message = written.json()["error"]["message"]
        assert "runtime.models[0].deployments[1].base_url" in message
        assert "server.backend_hosts" in message
        # A file written by an older farmhand holds such a pool: its chat is refused too.
        folder = tmp_path / "projects" / "default" / "old"
        folder.mkdir(parents=True)
        (folder / "farmhand.yaml").write_text(
            "runtime:\n  models:\n    - {name: m, provider: openai, model: x, deployments:"
            f' [{{base_url: "{good.url}/v1"}}, {{base_url: "{hidden}"}}]}}\n{API_MARKER}\n'
        )
        chat = httpx.post(farm.url + "/v1/projects/default/old/chat/completions", json=CHAT)
        assert chat.status_code == 403, chat.text
    assert internal.seen == [] and allowed.seen == []


def test_what_failing_deployments_say_is_not_echoed(tmp_path: Path) -> None:
    first = Listener(PlainTextResponse(f"Traceback: {SECRET}", status_code=500))
    second = Listener(PlainTextResponse(f"overloaded: {SECRET}", status_code=503))
    chat, _ = chat_over_two_deployments(tmp_path, first, second)
    assert SECRET not in chat.text
    assert "every backend serving the model is down" in chat.text
    # The turn went to each deployment once, with the client's key, before giving up.
    assert first.seen == [("/v1/chat/completions", "Bearer client-chosen")]
    assert second.seen == [("/v1/chat/completions", "Bearer client-chosen")]


def test_a_project_whose_deployments_are_all_down_says_when_to_retry(tmp_path: Path) -> None:
    busy = PlainTextResponse(f"busy: {SECRET}", status_code=503, headers={"Retry-After": "7"})
    first, second = Listener(busy), Listener(busy)
    chat, ports = chat_over_two_deployments(tmp_path, first, second)
    # As for an operator's model: a 503 with Retry-After, not a 502 without one.
    assert chat.status_code == 503, chat.text
    assert chat.headers["retry-after"] == "7"  # what the backends asked
    assert chat.json()["error"]["code"] == "backends_down"
    assert "every backend serving the model is down" in chat.text
    # Nothing of the pool: neither what the backends wrote nor where they are.
    assert SECRET not in chat.text and all(str(port) not in chat.text for port in ports)
