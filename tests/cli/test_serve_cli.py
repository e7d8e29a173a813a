"""`farmhand serve` as a real subprocess: the bind rule, API keys, the embedded model, and a
graceful stop."""

from __future__ import annotations

import signal
import subprocess
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
from openai import OpenAI
from tests.support.real_servers import free_port
from tests.support.serve_process import serving

Farmhand = Callable[..., subprocess.CompletedProcess[str]]


def test_binding_beyond_loopback_needs_an_api_key(tmp_path: Path, farmhand_cli: Farmhand) -> None:
    env = {"FARMHAND_API_KEYS": ""}
    run = farmhand_cli("serve", "--host", "0.0.0.0", "--port", "1", cwd=tmp_path, env=env)
    assert run.returncode == 1
    assert "refusing to listen on 0.0.0.0" in run.stderr
    assert "FARMHAND_API_KEYS" in run.stderr
    assert "Traceback" not in run.stderr


def test_serve_with_keys_on_all_interfaces_and_stop_gracefully(tmp_path: Path) -> None:
    port = free_port()
    env = {"FARMHAND_API_KEYS": "k1, k2", "FARMHAND_HOME": str(tmp_path / "home")}
    with serving("--host", "0.0.0.0", "--port", str(port), cwd=tmp_path, env=env) as served:
        url = f"http://127.0.0.1:{port}"
        assert httpx.get(f"{url}/v1/models").status_code == 401
        ok = httpx.get(f"{url}/v1/models", headers={"Authorization": "Bearer k2"})
        assert ok.status_code == 200
        assert [m["id"] for m in ok.json()["data"]] == ["default"]
        log = served.stop()
        # uvicorn finishes in-flight requests, runs the lifespan's shutdown (MCP pool,
        # providers), then exits by the signal it got.
        assert "Application shutdown complete" in log
        assert served.process.returncode in (0, -signal.SIGTERM)
        assert "Traceback" not in log


@pytest.mark.e2e
def test_plain_chat_with_the_embedded_model(tmp_path: Path) -> None:
    port = free_port()
    env = {"FARMHAND_API_KEYS": ""}
    with serving("--port", str(port), cwd=tmp_path, env=env):
        client = OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key="none", max_retries=0)
        reply = client.chat.completions.create(
            model="default",
            messages=[{"role": "user", "content": "Say hello."}],
            max_tokens=8,
            temperature=0,
            seed=1,
        )
        assert reply.choices[0].message.content
        assert reply.choices[0].finish_reason in ("stop", "length")
        assert reply.usage is not None and reply.usage.completion_tokens > 0
        chunks = list(
            client.chat.completions.create(
                model="default",
                messages=[{"role": "user", "content": "Say hello."}],
                max_tokens=8,
                stream=True,
            )
        )
        text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
        assert text
