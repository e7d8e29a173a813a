"""An OpenAI-compatible backend that streams its answer slowly: `pieces` words, one every
`pause` seconds, so a test can do something (send SIGTERM) while a stream is in flight.

    with SlowBackend(pieces=8, pause=0.4) as backend:
        config = model_config(backend.url, "slow")   # tests.support.scripted_backend
"""

from __future__ import annotations

import json
import time
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.support.scripted_backend import HTTPBackend


def piece(index: int) -> str:
    """The word the backend sends as its `index`th chunk."""
    return f"word{index} "


class SlowBackend(HTTPBackend):
    def __init__(self, *, pieces: int, pause: float) -> None:
        self.requests = 0
        backend = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.0"  # the body ends when the connection closes

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers["Content-Length"]))
                backend.requests += 1
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                try:
                    for index in range(pieces):
                        self.chunk({"role": "assistant", "content": piece(index)}, None)
                        time.sleep(pause)
                    self.chunk({}, "stop")
                    self.wfile.write(b"data: [DONE]\n\n")
                except (BrokenPipeError, ConnectionResetError):
                    pass  # farmhand stopped reading (its stream was cut)

            def chunk(self, delta: dict[str, Any], finish: str | None) -> None:
                choice = {"index": 0, "delta": delta, "finish_reason": finish}
                line = json.dumps({"object": "chat.completion.chunk", "choices": [choice]})
                self.wfile.write(f"data: {line}\n\n".encode())
                self.wfile.flush()

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.serve(Handler, daemon_threads=True)
