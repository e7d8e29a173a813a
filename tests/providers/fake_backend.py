"""A canned OpenAI-compatible backend on a real loopback socket, for provider tests.

It runs in a thread, so a test can build a provider from it without an async context, and
it knows nothing of the HTTP client the provider uses: what it checks is the wire.
"""

from __future__ import annotations

import json
import socket
import socketserver
import threading
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any

from farmhand.providers.openai_compat import OpenAICompatProvider

_open: list[Server] = []


@dataclass
class Recorded:
    """One request as the server read it (header names lower-cased)."""

    method: str
    path: str
    headers: dict[str, str]
    content: bytes


class Server:
    """Records each request and answers with a canned body, sent in `split`-byte pieces.

    `hold`: after the body, keep the connection open until the client closes it (the body
    then has no end the client could see); `closed` says the client did. `first`: the
    status and JSON body the first request gets instead (a refusal, say)."""

    def __init__(
        self,
        body: bytes,
        status: int = 200,
        split: int = 7,
        kind: str = "text/event-stream",
        hold: bool = False,
        first: tuple[int, bytes] | None = None,
    ) -> None:
        self.body, self.status, self.split, self.kind, self.hold = body, status, split, kind, hold
        self.first = first
        self.requests: list[Recorded] = []
        self.closed = threading.Event()
        self._tcp = _Listener(("127.0.0.1", 0), _handler_for(self))
        self.url = f"http://127.0.0.1:{self._tcp.server_address[1]}/v1"
        threading.Thread(target=self._tcp.serve_forever, args=(0.05,), daemon=True).start()
        _open.append(self)

    @property
    def sent(self) -> dict[str, Any]:
        """The JSON body of the last request."""
        result: dict[str, Any] = json.loads(self.requests[-1].content)
        return result

    def provider(self, **kwargs: Any) -> OpenAICompatProvider:
        return OpenAICompatProvider(self.url, "test-model", **kwargs)

    def shutdown(self) -> None:
        self._tcp.shutdown()
        self._tcp.server_close()


def close_all() -> None:
    """Stops every server the test started."""
    while _open:
        _open.pop().shutdown()


class _Listener(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True


def _handler_for(server: Server) -> type[socketserver.StreamRequestHandler]:
    class Handler(socketserver.StreamRequestHandler):
        def handle(self) -> None:
            request_line = self.rfile.readline().decode("latin-1").split()
            if len(request_line) < 2:
                return
            headers: dict[str, str] = {}
            while (line := self.rfile.readline().decode("latin-1").strip()) != "":
                name, _, value = line.partition(":")
                headers[name.strip().lower()] = value.strip()
            content = self.rfile.read(int(headers.get("content-length", "0")))
            server.requests.append(Recorded(request_line[0], request_line[1], headers, content))
            code, kind, body = server.status, server.kind, server.body
            if server.first is not None and len(server.requests) == 1:
                (code, body), kind = server.first, "application/json"
            status = f"{code} {HTTPStatus(code).phrase}"
            head = f"HTTP/1.1 {status}\r\ncontent-type: {kind}\r\n"
            self.wfile.write(f"{head}connection: close\r\n\r\n".encode())
            try:
                for start in range(0, len(body), server.split):
                    self.wfile.write(body[start : start + server.split])
                    self.wfile.flush()
            except OSError:  # the client closed the connection before the body's end
                server.closed.set()
                return
            if server.hold:
                self.connection.settimeout(10)
                try:
                    while self.connection.recv(1024):
                        pass
                except TimeoutError:  # the client never closed it
                    return
                except OSError:  # a reset is a close too
                    pass
                server.closed.set()
                return
            self.connection.shutdown(socket.SHUT_WR)

    return Handler
