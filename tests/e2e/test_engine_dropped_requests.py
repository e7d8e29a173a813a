"""Clients that leave cannot break the embedded model, and stop costing it anything.

Replays issue 25's crash over a real `farmhand serve` with the real embedded model and real
sockets: three streamed chat completions, each socket closed about a second into its
answer, then one more request. Before the engine, the model's lock was released while a
worker thread was still decoding, the next request used the same llama context at the same
time, and llama.cpp aborted the process (SIGABRT). Also: a non-streamed request whose client
leaves stops generating (the model is idle again at once instead of writing its 2,000
tokens for nobody), and the bounds a request meets before any work starts: a full queue
(429 with Retry-After in each dialect's shape) and a prompt longer than the context (400).
"""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from openai import OpenAI
from tests.support.real_servers import free_port, healthy, wait_until
from tests.support.serve_process import Served, serving

pytestmark = pytest.mark.e2e

COUNTING = "Count from 1 to 2000, one number per line, and nothing else."


def _post(port: int, path: str, body: dict[str, Any]) -> socket.socket:
    """A raw HTTP request whose socket the test closes when it likes."""
    payload = json.dumps(body).encode()
    sock = socket.create_connection(("127.0.0.1", port), timeout=120)
    sock.sendall(
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(payload)}\r\n\r\n".encode()
        + payload
    )
    return sock


def _read_until(sock: socket.socket, marker: bytes) -> bytes:
    seen = b""
    while marker not in seen:
        chunk = sock.recv(4096)
        assert chunk, f"connection closed before {marker!r}: {seen!r}"
        seen += chunk
    return seen


def _engine(port: int) -> dict[str, Any]:
    """The default model's engine as /api/ps shows it ({} before it is loaded)."""
    models = httpx.get(f"http://127.0.0.1:{port}/api/ps", timeout=30).json()["models"]
    return models[0]["farmhand"] if models else {}


@contextmanager
def _served(
    tmp_path: Path, max_queue: int, n_parallel: int | None = None
) -> Iterator[tuple[int, Served]]:
    (tmp_path / "farmhand.yaml").write_text(
        f"server:\n  engine:\n    max_queue: {max_queue}\n"
        "runtime:\n  models:\n    - name: default\n      n_ctx: 4096\n"
        + (f"      n_parallel: {n_parallel}\n" if n_parallel else "")
    )
    port = free_port()
    with serving("--port", str(port), cwd=tmp_path, env={"FARMHAND_API_KEYS": ""}) as served:
        assert wait_until(lambda: healthy(port), timeout=60)  # bound after startup
        yield port, served


@pytest.fixture
def server(tmp_path: Path) -> Iterator[tuple[int, Served]]:
    with _served(tmp_path, max_queue=8) as served:
        yield served


@pytest.fixture
def no_queue_server(tmp_path: Path) -> Iterator[tuple[int, Served]]:
    """A model that takes one request and queues none."""
    with _served(tmp_path, max_queue=0, n_parallel=1) as served:
        yield served


def test_dropped_streams_leave_the_server_up_and_the_model_usable(
    server: tuple[int, Served],
) -> None:
    port, served = server
    stream = {
        "model": "default",
        "messages": [{"role": "user", "content": COUNTING}],
        "stream": True,
        "max_tokens": 128,
    }
    for _ in range(3):
        sock = _post(port, "/v1/chat/completions", stream)
        _read_until(sock, b"data: ")  # the answer is being written
        time.sleep(1.0)
        sock.close()
    client = OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key="none", max_retries=0)
    reply = client.chat.completions.create(
        model="default",
        messages=[{"role": "user", "content": "Say hello."}],
        max_tokens=8,
        temperature=0,
    )
    assert reply.choices[0].message.content
    assert served.process.poll() is None, "the server died"
    log = served.stop()
    for crash in ("GGML_ASSERT", "generator already executing", "Traceback"):
        assert crash not in log, log


def test_a_client_that_leaves_a_whole_answer_stops_its_generation(
    server: tuple[int, Served],
) -> None:
    port, _ = server
    body = {
        "model": "default",
        "messages": [{"role": "user", "content": COUNTING}],
        "max_tokens": 2000,
        "temperature": 0,
    }
    sock = _post(port, "/v1/chat/completions", body)
    assert wait_until(lambda: _engine(port).get("active") == 1, timeout=120)
    sock.close()
    # 2,000 tokens take many minutes on this machine; a dropped request frees the model at
    # its next step (a token, or a chunk of its prompt).
    assert wait_until(lambda: _engine(port).get("active") == 0, timeout=120), _engine(port)


def test_a_full_queue_is_a_429_with_retry_after_in_each_dialect(
    no_queue_server: tuple[int, Served],
) -> None:
    port, _ = no_queue_server
    base = f"http://127.0.0.1:{port}"
    holder = _post(
        port,
        "/v1/chat/completions",
        {
            "model": "default",
            "messages": [{"role": "user", "content": COUNTING}],
            "stream": True,
            "max_tokens": 1500,
        },
    )
    _read_until(holder, b"data: ")
    try:
        question = [{"role": "user", "content": "Say hello."}]
        openai = httpx.post(
            f"{base}/v1/chat/completions",
            json={"model": "default", "messages": question, "max_tokens": 4},
            timeout=60,
        )
        anthropic = httpx.post(
            f"{base}/v1/messages",
            json={"model": "default", "messages": question, "max_tokens": 4},
            timeout=60,
        )
        ollama = httpx.post(
            f"{base}/api/chat",
            json={"model": "default", "messages": question, "stream": False},
            timeout=60,
        )
    finally:
        holder.close()
    for response in (openai, anthropic, ollama):
        assert response.status_code == 429, response.text
        assert int(response.headers["retry-after"]) >= 1
        assert "max_queue" in response.text
    assert openai.json()["error"]["code"] == "model_busy"
    assert anthropic.json()["error"]["type"] == "rate_limit_error"
    assert "busy" in ollama.json()["error"]
    # Once the holder left, the model takes requests again.
    assert wait_until(lambda: _engine(port).get("active") == 0, timeout=120)
    again = httpx.post(
        f"{base}/v1/chat/completions",
        json={"model": "default", "messages": question, "max_tokens": 4},
        timeout=120,
    )
    assert again.status_code == 200, again.text


def test_a_prompt_longer_than_the_context_is_a_400_before_any_work(
    server: tuple[int, Served],
) -> None:
    port, _ = server
    long_prompt = "word " * 20_000  # about 20,000 tokens against n_ctx 4096
    response = httpx.post(
        f"http://127.0.0.1:{port}/v1/chat/completions",
        json={"model": "default", "messages": [{"role": "user", "content": long_prompt}]},
        timeout=120,
    )
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert error["code"] == "context_length_exceeded"
    assert "4096" in error["message"] and "shorten" in error["message"]
