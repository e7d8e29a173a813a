"""A scripted OpenAI-compatible backend for driving the real `farmhand` command in tests.

It serves `POST /v1/chat/completions` (streamed, as farmhand's openai provider asks) from a
script of turns, one per request: a tool call, or a text. `answer_with_result()` answers with
the content of the last tool message it was sent, so a test sees on stdout what the tool
returned to the model. A request beyond the script is answered with HTTP 500.

    with ScriptedBackend([call("everything:echo", {"message": "hi"}), answer_with_result()]) as b:
        config = model_config(b.url)   # provider: openai, base_url: b.url
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Self

Turn = Callable[[dict[str, Any]], dict[str, Any]]
"""From the request body to the assistant's delta (content or tool_calls)."""


def call(name: str, arguments: dict[str, Any]) -> Turn:
    def turn(request: dict[str, Any]) -> dict[str, Any]:
        function = {"name": name, "arguments": json.dumps(arguments)}
        tool_call = {"index": 0, "id": "call_1", "type": "function", "function": function}
        return {"tool_calls": [tool_call]}

    return turn


def say(text: str) -> Turn:
    return lambda request: {"content": text}


def answer_with_result(prefix: str = "The tool said: ") -> Turn:
    def turn(request: dict[str, Any]) -> dict[str, Any]:
        tools = [m for m in request["messages"] if m.get("role") == "tool"]
        return {"content": prefix + (tools[-1]["content"] if tools else "(nothing)")}

    return turn


def model_config(url: str, name: str = "scripted") -> dict[str, Any]:
    """A `runtime.models` entry that uses this backend."""
    return {"name": name, "provider": "openai", "model": "scripted", "base_url": url}


class HTTPBackend:
    """A backend on a loopback port, served by a thread while the `with` block runs."""

    def serve(self, handler: type[BaseHTTPRequestHandler], *, daemon_threads: bool = False) -> None:
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.server.daemon_threads = daemon_threads
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> Self:
        self.thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.server.shutdown()
        self.server.server_close()


class ScriptedBackend(HTTPBackend):
    def __init__(self, turns: list[Turn]) -> None:
        self.turns = list(turns)
        self.requests: list[dict[str, Any]] = []
        backend = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                backend.requests.append(body)
                if not backend.turns:
                    self.send_error(500, "the script has no more turns")
                    return
                delta = backend.turns.pop(0)(body)
                finish = "tool_calls" if "tool_calls" in delta else "stop"
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                for piece, reason in (({"role": "assistant", **delta}, None), ({}, finish)):
                    choice = {"index": 0, "delta": piece, "finish_reason": reason}
                    line = json.dumps({"object": "chat.completion.chunk", "choices": [choice]})
                    self.wfile.write(f"data: {line}\n\n".encode())
                self.wfile.write(b"data: [DONE]\n\n")

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.serve(Handler)
