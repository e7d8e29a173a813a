"""EventStream as an ASGI app, driven directly: what reaches `send`, and when."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any

import anyio
import pytest
from starlette.responses import PlainTextResponse

from farmhand.server.streaming import FLUSH_BYTES, EventStream, StreamItem

pytestmark = pytest.mark.anyio


async def played(items: Any) -> list[dict[str, Any]]:
    """The ASGI messages EventStream sends for `items`, the client staying to the end."""
    sent: list[dict[str, Any]] = []
    finished = anyio.Event()

    async def receive() -> dict[str, Any]:
        await finished.wait()
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)
        if message["type"] == "http.response.body" and not message["more_body"]:
            finished.set()

    stream = EventStream(
        items,
        form="ndjson",
        error_response=lambda exc: PlainTextResponse(str(exc), 400),
        error_items=lambda exc: [{"error": str(exc)}],
    )
    await stream({"type": "http"}, receive, send)
    return sent


def bodies(sent: list[dict[str, Any]]) -> list[bytes]:
    return [m["body"] for m in sent if m["type"] == "http.response.body"]


async def test_what_is_rendered_without_waiting_goes_out_in_one_send() -> None:
    async def items() -> AsyncGenerator[StreamItem, None]:
        for n in range(5):
            yield {"n": n}

    sent = await played(items)
    assert sent[0]["type"] == "http.response.start" and sent[0]["status"] == 200
    assert bodies(sent) == [b"".join(b'{"n":%d}\n' % n for n in range(5))]


async def test_what_comes_after_a_wait_goes_out_before_the_wait_ends() -> None:
    async def items() -> AsyncGenerator[StreamItem, None]:
        yield {"n": 0}
        yield {"n": 1}
        await anyio.sleep(0.05)  # the model thinking: the first two must not wait for it
        yield {"n": 2}

    sent = await played(items)
    assert bodies(sent) == [b'{"n":0}\n{"n":1}\n', b'{"n":2}\n']


async def test_a_producer_far_ahead_of_the_client_sends_itself() -> None:
    big = "x" * (FLUSH_BYTES // 2 + 1)

    async def items() -> AsyncGenerator[StreamItem, None]:
        for _ in range(3):  # never waits: only the size bound makes it send
            yield big

    sent = await played(items)
    line = big.encode() + b"\n"
    assert bodies(sent) == [line * 2, line]
