"""A request whose client leaves is cancelled (the model it holds is free at once), over
real uvicorn and a real socket; one whose handler listens for the disconnect itself (a
stream) gets it instead, and one whose client stays is answered."""

from __future__ import annotations

import json
import socket
import threading

import anyio
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from tests.support.live import LiveServer
from tests.support.real_servers import wait_until

from farmhand.server.disconnect import CancelOnDisconnect

cancelled = threading.Event()
started = threading.Event()


async def slow(request: Request) -> Response:
    started.set()
    try:
        await anyio.sleep(float((await request.json())["seconds"]))
    except anyio.get_cancelled_exc_class():
        cancelled.set()
        raise
    return JSONResponse({"done": True})


def app() -> CancelOnDisconnect:
    return CancelOnDisconnect(Starlette(routes=[Route("/slow", slow, methods=["POST"])]))


def post(port: int, seconds: float) -> socket.socket:
    body = json.dumps({"seconds": seconds}).encode()
    sock = socket.create_connection(("127.0.0.1", port), timeout=30)
    sock.sendall(
        b"POST /slow HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        + f"Content-Length: {len(body)}\r\n\r\n".encode()
        + body
    )
    return sock


def test_a_client_that_leaves_cancels_its_request() -> None:
    cancelled.clear()
    started.clear()
    with LiveServer(app()) as server:
        sock = post(server.port, 60)
        assert started.wait(10)
        sock.close()
        assert wait_until(cancelled.is_set, timeout=10)


def test_a_client_that_stays_is_answered() -> None:
    cancelled.clear()
    with LiveServer(app()) as server:
        sock = post(server.port, 0.1)
        answer = b""
        while b'"done":true' not in answer:
            chunk = sock.recv(4096)
            assert chunk, answer
            answer += chunk
        sock.close()
        assert answer.startswith(b"HTTP/1.1 200")
        assert not cancelled.is_set()
