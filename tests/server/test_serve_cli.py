"""`farmhand serve` as a real subprocess: the bind rule, API keys, the embedded model, and a
graceful stop."""

from __future__ import annotations

import os
import queue
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
from openai import OpenAI

Farmhand = Callable[..., subprocess.CompletedProcess[str]]
READY = "Application startup complete"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class Served:
    def __init__(self, process: subprocess.Popen[str], lines: queue.Queue[str | None]) -> None:
        self.process = process
        self.lines = lines

    def stop(self) -> str:
        """SIGTERM, then the rest of the log once the process has exited."""
        self.process.send_signal(signal.SIGTERM)
        self.process.wait(timeout=60)
        rest: list[str] = []
        while (line := self.lines.get(timeout=10)) is not None:
            rest.append(line)
        return "".join(rest)


@contextmanager
def serving(*args: str, cwd: Path, env: dict[str, str]) -> Iterator[Served]:
    """`farmhand serve ARGS`, once uvicorn says the app has started (read from its log)."""
    process = subprocess.Popen(
        [sys.executable, "-m", "farmhand", "serve", *args],
        cwd=cwd,
        env={**os.environ, **env},
        stderr=subprocess.PIPE,
        text=True,
    )
    lines: queue.Queue[str | None] = queue.Queue()

    def read() -> None:
        assert process.stderr is not None
        for line in process.stderr:
            lines.put(line)
        lines.put(None)

    threading.Thread(target=read, daemon=True).start()
    seen: list[str] = []
    try:
        while True:
            line = lines.get(timeout=60)
            if line is None:
                raise AssertionError(f"farmhand serve exited early:\n{''.join(seen)}")
            seen.append(line)
            if READY in line:
                break
        yield Served(process, lines)
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            process.wait(timeout=60)


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
