"""An OpenAI-compatible backend that streams its answer slowly: `pieces` words, one every
`pause` seconds, so a test can do something (send SIGTERM) while a stream is in flight.

    with SlowBackend(pieces=8, pause=0.4) as backend:
        config = model_config(backend.url, "slow")   # tests.support.scripted_backend
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any


def piece(index: int) -> str:
    """The word the backend sends as its `index`th chunk."""
    return f"word{index} "


class SlowBackend:
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

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> SlowBackend:
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
