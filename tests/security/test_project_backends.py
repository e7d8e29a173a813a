"""Issue 25, finding 2: SSRF through a project written over the API.

A project's model could send its turns to any URL (an internal admin route, a metadata
address), with the client's own `Authorization`; farmhand followed the backend's redirects,
echoed what it answered, and loaded any GGUF on disk, telling which paths exist. Now a
client's project reaches only `server.backend_hosts`, follows no redirect, hears a status
and a fixed reason, and names model files only inside `allowed_dirs` or the model cache.
Each attack is replayed over real uvicorn against a loopback listener that records what
reached it.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, RedirectResponse, Response
from starlette.routing import Route
from tests.support.live import LiveServer, scripted_config

from farmhand.assembly import create_app
from farmhand.config.models import FarmhandConfig
from farmhand.service.projects import API_MARKER

SECRET = "internal-secret-7f3a"
CHAT = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}


class Listener:
    """A loopback HTTP server that records every request and answers as told."""

    def __init__(self, answer: Response | None = None) -> None:
        self.seen: list[tuple[str, str]] = []  # (path and query, Authorization)
        self.answer = answer or PlainTextResponse(f"{SECRET}\nsecond line", status_code=200)
        self.app = Starlette(
            routes=[Route("/{rest:path}", self.record, methods=["GET", "POST", "PUT", "DELETE"])]
        )

    async def record(self, request: Request) -> Response:
        query = f"?{request.url.query}" if request.url.query else ""
        self.seen.append((request.url.path + query, request.headers.get("authorization", "")))
        return self.answer


def farmhand(home: Path, **server: Any) -> LiveServer:
    data = scripted_config().model_dump()
    data["server"] = server
    return LiveServer(create_app(FarmhandConfig.model_validate(data), home=home, api_keys=()))


def model_at(base_url: str, **extra: Any) -> dict[str, Any]:
    model = {"name": "m", "provider": "openai", "model": "x", "base_url": base_url}
    return {"runtime": {"models": [{**model, "api_key": "client-chosen", **extra}]}}


@contextmanager
def project_behind(home: Path, backend: Listener) -> Iterator[LiveServer]:
    """farmhand whose operator allows `backend`'s address, with project p using it."""
    with (
        LiveServer(backend.app) as allowed,
        farmhand(home, backend_hosts=[f"127.0.0.1:{allowed.port}"]) as farm,
    ):
        config = model_at(allowed.url + "/v1")
        written = httpx.post(
            farm.url + "/v1/projects/default", json={"name": "p", "config": config}
        )
        assert written.status_code == 200, written.text
        yield farm


def test_a_project_cannot_send_its_turns_to_a_host_nobody_allowed(tmp_path: Path) -> None:
    internal = Listener()
    with LiveServer(internal.app) as target, farmhand(tmp_path) as farm:
        url = f"{target.url}/admin/delete-all?x="
        written = httpx.post(
            farm.url + "/v1/projects/default", json={"name": "p", "config": model_at(url)}
        )
        assert written.status_code == 403, written.text
        assert "server.backend_hosts" in written.text
        # A file written by an older farmhand holds the URL: its chat is refused as well.
        folder = tmp_path / "projects" / "default" / "old"
        folder.mkdir(parents=True)
        (folder / "farmhand.yaml").write_text(
            "runtime:\n  models:\n    - {name: m, provider: openai, model: x,"
            f' base_url: "{url}"}}\n{API_MARKER}\n'
        )
        chat = httpx.post(farm.url + "/v1/projects/default/old/chat/completions", json=CHAT)
        assert chat.status_code == 403, chat.text
        # The provider's default address is held to the same list.
        default = {"runtime": {"models": [{"name": "m", "provider": "openai", "model": "x"}]}}
        refused = httpx.post(
            farm.url + "/v1/projects/default", json={"name": "q", "config": default}
        )
        assert refused.status_code == 403, refused.text
        assert "api.openai.com" in refused.text
    assert internal.seen == []


def test_a_redirect_from_an_allowed_backend_is_not_followed(tmp_path: Path) -> None:
    internal = Listener()
    with LiveServer(internal.app) as target:
        hop = Listener(RedirectResponse(f"{target.url}/admin?token=1", status_code=307))
        with project_behind(tmp_path, hop) as farm:
            chat = httpx.post(farm.url + "/v1/projects/default/p/chat/completions", json=CHAT)
    assert chat.status_code == 502, chat.text
    assert chat.json()["error"]["message"] == "the model's backend answered HTTP 307"
    assert hop.seen == [("/v1/chat/completions", "Bearer client-chosen")]
    assert internal.seen == []


@pytest.mark.parametrize(
    "answer",
    [
        PlainTextResponse(f"{SECRET}\nsecond line", status_code=200),
        PlainTextResponse(f"Traceback: {SECRET}", status_code=500),
        Response(f'{{"error": {{"message": "{SECRET}"}}}}', 404, media_type="application/json"),
        Response(f'data: {{"error": "{SECRET}"}}\n\n', 200, media_type="text/event-stream"),
    ],
    ids=["200 text", "500", "404 json", "error mid-stream"],
)
def test_what_a_clients_backend_says_is_not_echoed(tmp_path: Path, answer: Response) -> None:
    backend = Listener(answer)
    with project_behind(tmp_path, backend) as farm:
        for stream in (False, True):
            chat = httpx.post(
                farm.url + "/v1/projects/default/p/chat/completions",
                json={**CHAT, "stream": stream},
            )
            assert SECRET not in chat.text
            assert "model's backend" in chat.text
    assert len(backend.seen) >= 2


def test_the_operators_own_backend_keeps_its_message(tmp_path: Path) -> None:
    backend = Listener(PlainTextResponse(f"model {SECRET} is not loaded", status_code=500))
    with LiveServer(backend.app) as target:
        config = FarmhandConfig.model_validate(model_at(target.url + "/v1"))
        with LiveServer(create_app(config, home=tmp_path, api_keys=())) as farm:
            chat = httpx.post(farm.url + "/v1/chat/completions", json=CHAT)
    assert chat.status_code == 502, chat.text
    assert SECRET in chat.json()["error"]["message"]


def test_model_files_outside_the_allowed_folders_are_refused_alike(tmp_path: Path) -> None:
    allowed = tmp_path / "allowed"
    allowed.mkdir()
    outside = tmp_path / "outside.gguf"
    outside.write_bytes(b"GGUF" + b"\0" * 64)
    with farmhand(tmp_path / "home", allowed_dirs=[str(allowed)]) as farm:
        answers = {}
        for name, path in {
            "existing gguf": str(outside),
            "passwd": "/etc/passwd",
            "missing": str(tmp_path / "no-such-file.gguf"),
            "escape": f"{allowed}/../outside.gguf",
        }.items():
            for key in ("model", "model_path"):
                config = {"runtime": {"models": [{"name": "m", key: path}]}}
                reply = httpx.post(
                    farm.url + "/v1/projects/default", json={"name": "p", "config": config}
                )
                assert reply.status_code == 400, reply.text
                message = reply.json()["error"]["message"].replace(repr(path), "PATH")
                assert "server.allowed_dirs" in message
                assert "gguf file" not in message and "does not exist" not in message
                answers[name, key] = message
    for key in ("model", "model_path"):
        assert len({m for (_, k), m in answers.items() if k == key}) == 1, answers
