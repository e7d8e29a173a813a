"""SIGTERM drains a real `farmhand serve`: the stream in flight finishes, a new request gets
a 503 with Retry-After meanwhile, the process exits 0; a stream longer than
`server.drain_timeout` is cut with the dialect's error event and `[DONE]`, an answer not
begun by then is a 503, and the exit is still clean. The model is a slow OpenAI-compatible
backend (a word every fraction of a second), so the stream is surely in flight when the
signal comes."""

from __future__ import annotations

import json
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import yaml
from tests.support.real_servers import free_port
from tests.support.scripted_backend import model_config
from tests.support.serve_process import Served, serving
from tests.support.slow_backend import SlowBackend, piece

QUESTION = {"model": "slow", "stream": True, "messages": [{"role": "user", "content": "talk"}]}
WHOLE = {**QUESTION, "stream": False}


class StreamReader:
    """Reads one streamed chat in a thread; `started` is set at its first event."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.events: list[str] = []
        self.started = threading.Event()
        self.thread = threading.Thread(target=self.read, daemon=True)
        self.thread.start()

    def read(self) -> None:
        chat = f"{self.url}/v1/chat/completions"
        with httpx.stream("POST", chat, json=QUESTION, timeout=60) as answer:
            for line in answer.iter_lines():
                if line.startswith("data: "):
                    self.events.append(line.removeprefix("data: "))
                    self.started.set()

    def text(self) -> str:
        chunks = [json.loads(e) for e in self.events if e != "[DONE]"]
        return "".join(
            c["choices"][0]["delta"].get("content") or "" for c in chunks if c.get("choices")
        )


@contextmanager
def served_slow(
    tmp_path: Path, *, pieces: int, drain_timeout: float
) -> Iterator[tuple[Served, str, SlowBackend]]:
    with SlowBackend(pieces=pieces, pause=0.4) as backend:
        server = {"drain_timeout": drain_timeout}
        config = {"runtime": {"models": [model_config(backend.url, "slow")]}, "server": server}
        (tmp_path / "farmhand.yaml").write_text(yaml.safe_dump(config))
        port = free_port()
        env = {"FARMHAND_API_KEYS": "", "FARMHAND_HOME": str(tmp_path / "home")}
        with serving("--port", str(port), cwd=tmp_path, env=env) as served:
            yield served, f"http://127.0.0.1:{port}", backend


def refusal_while_draining(url: str) -> httpx.Response:
    """A new request once the drain began (it starts on uvicorn's next tick)."""
    for _ in range(100):
        answer = httpx.get(f"{url}/v1/models", timeout=10)
        if answer.status_code == 503:
            return answer
        threading.Event().wait(0.05)
    raise AssertionError("the server never refused a new request while draining")


def rest_of_log(served: Served) -> str:
    lines: list[str] = []
    while (line := served.lines.get(timeout=10)) is not None:
        lines.append(line)
    return "".join(lines)


def test_sigterm_lets_the_stream_finish_refuses_new_requests_and_exits_0(tmp_path: Path) -> None:
    with served_slow(tmp_path, pieces=8, drain_timeout=60) as (served, url, _):
        stream = StreamReader(url)
        assert stream.started.wait(30)
        served.process.send_signal(signal.SIGTERM)

        refused = refusal_while_draining(url)
        assert refused.headers["retry-after"] == "1"
        error = refused.json()["error"]
        assert error["code"] == "shutting_down"
        assert "shutting down" in error["message"]
        ready = httpx.get(f"{url}/ready", timeout=10)
        assert (ready.status_code, ready.json()) == (503, {"status": "draining"})
        assert httpx.get(f"{url}/health", timeout=10).json() == {"status": "ok"}

        stream.thread.join(timeout=60)
        assert stream.text() == "".join(piece(i) for i in range(8))
        assert stream.events[-1] == "[DONE]"
        assert served.process.wait(timeout=60) == 0
        log = rest_of_log(served)
    assert "draining: 1 request(s) in flight" in log
    assert "Application shutdown complete" in log
    assert "Traceback" not in log


def test_a_stream_longer_than_drain_timeout_ends_with_an_error_event(tmp_path: Path) -> None:
    with served_slow(tmp_path, pieces=200, drain_timeout=1) as (served, url, _):
        stream = StreamReader(url)
        assert stream.started.wait(30)
        served.process.send_signal(signal.SIGTERM)

        stream.thread.join(timeout=60)
        assert not stream.thread.is_alive()
        assert stream.events[-1] == "[DONE]"
        last = json.loads(stream.events[-2])
        assert last["error"]["code"] == "shutting_down"
        assert "drain_timeout" in last["error"]["message"]
        assert piece(199) not in stream.text()
        assert served.process.wait(timeout=60) == 0
        log = rest_of_log(served)
    assert "cutting 1 request(s) in flight" in log
    assert "Traceback" not in log


def test_an_answer_not_sent_by_drain_timeout_is_a_503(tmp_path: Path) -> None:
    with served_slow(tmp_path, pieces=200, drain_timeout=1) as (served, url, backend):
        answers: list[httpx.Response] = []

        def ask() -> None:
            answers.append(httpx.post(f"{url}/v1/chat/completions", json=WHOLE, timeout=60))

        asking = threading.Thread(target=ask)
        asking.start()
        for _ in range(600):  # until the backend was asked: the request is in flight
            if backend.requests:
                break
            threading.Event().wait(0.05)
        assert backend.requests == 1
        served.process.send_signal(signal.SIGTERM)
        asking.join(timeout=60)
        (answer,) = answers
        assert answer.status_code == 503
        assert answer.headers["retry-after"] == "1"
        assert answer.json()["error"]["code"] == "shutting_down"
        assert served.process.wait(timeout=60) == 0
