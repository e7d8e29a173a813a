"""One streaming response for every dialect: Server-Sent Events or NDJSON lines.

A dialect gives an async iterator of its wire objects (rendered from the loop's events) and
says how an error looks in its stream; `EventStream` does the rest, the same way for all:

- the status line waits for the first object, so a failure before it (an unknown model, a
  refused server) is still an ordinary 4xx with the dialect's error body;
- a failure after it is written inside the stream, as the dialect's error object;
- the whole chat runs in the task that sends the response (the loop's cancel scopes stay in
  one task), and a client that goes away cancels it.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, Callable, Sequence
from contextlib import aclosing, suppress
from dataclasses import dataclass
from typing import Any, Literal

import anyio
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

StreamFormat = Literal["sse", "ndjson"]


@dataclass(frozen=True)
class SSEEvent:
    """An SSE event with a name (`event: <name>`), as the Responses and Messages APIs send;
    a bare dict or string is a `data:` line alone."""

    event: str
    data: dict[str, Any]


StreamItem = dict[str, Any] | str | SSEEvent
ErrorItems = Callable[[BaseException], Sequence[StreamItem]]
ErrorResponse = Callable[[BaseException], Response]

CONTENT_TYPES: dict[StreamFormat, bytes] = {
    "sse": b"text/event-stream; charset=utf-8",
    "ndjson": b"application/x-ndjson",
}


def encode(item: StreamItem, form: StreamFormat) -> bytes:
    """One object as the bytes on the wire."""
    if isinstance(item, SSEEvent):
        data = json.dumps(item.data, ensure_ascii=False)
        return f"event: {item.event}\ndata: {data}\n\n".encode()
    text = item if isinstance(item, str) else json.dumps(item, ensure_ascii=False)
    return f"data: {text}\n\n".encode() if form == "sse" else text.encode() + b"\n"


class EventStream(Response):
    """Streams `items()`. `error_response` answers a failure before the first object,
    `error_items` renders one after it; `closing` objects end every stream that started
    (OpenAI's `[DONE]`); `on_disconnect` runs when the client left early."""

    def __init__(
        self,
        items: Callable[[], AsyncGenerator[StreamItem, None]],
        *,
        form: StreamFormat,
        error_response: ErrorResponse,
        error_items: ErrorItems,
        closing: Sequence[StreamItem] = (),
        on_disconnect: Callable[[], None] | None = None,
    ) -> None:
        super().__init__()
        self.items = items
        self.form = form
        self.error_response = error_response
        self.error_items = error_items
        self.closing = closing
        self.on_disconnect = on_disconnect
        self.disconnected = False

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async with anyio.create_task_group() as group:

            async def watch() -> None:
                while (await receive())["type"] != "http.disconnect":
                    pass
                self.disconnected = True
                group.cancel_scope.cancel()

            group.start_soon(watch)
            await self._stream(scope, receive, send)
            group.cancel_scope.cancel()
        if self.disconnected and self.on_disconnect is not None:
            self.on_disconnect()

    async def _stream(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def write(item: StreamItem) -> None:
            body = encode(item, self.form)
            await send({"type": "http.response.body", "body": body, "more_body": True})

        started = False
        async with aclosing(self.items()) as items:
            try:
                async for item in items:
                    if not started:
                        await self._start(send)
                        started = True
                    await write(item)
            except Exception as exc:
                if not started:
                    await self.error_response(exc)(scope, receive, send)
                    return
                with suppress(OSError):  # the client may be gone already
                    for item in self.error_items(exc):
                        await write(item)
        if not started:
            await self._start(send)
        for item in self.closing:
            await write(item)
        await send({"type": "http.response.body", "body": b"", "more_body": False})

    async def _start(self, send: Send) -> None:
        headers = [(b"content-type", CONTENT_TYPES[self.form]), (b"cache-control", b"no-cache")]
        if self.form == "sse":
            headers.append((b"x-accel-buffering", b"no"))
        await send({"type": "http.response.start", "status": 200, "headers": headers})
