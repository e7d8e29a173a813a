"""One streaming response for every dialect: Server-Sent Events or NDJSON lines.

A dialect gives an async iterator of its wire objects (rendered from the loop's events) and
says how an error looks in its stream; `EventStream` does the rest, the same way for all:

- the status line waits for the first object, so a failure before it (an unknown model, a
  refused server) is still an ordinary 4xx with the dialect's error body;
- a failure after it is written inside the stream, as the dialect's error object;
- the whole chat runs in the task that sends the response (the loop's cancel scopes stay in
  one task), and a client that goes away cancels it;
- objects rendered while the chat keeps running go out in one write when it next waits
  (`CorkedBody`): a backend that sends ten chunks in one packet costs one send, not ten;
- a server that stops (`drain.py`, past `server.drain_timeout`) ends a started stream with
  the dialect's error object and its closing items, not a cut connection.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Callable, Mapping, Sequence
from contextlib import aclosing, suppress
from dataclasses import dataclass
from typing import Any, Literal

from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from farmhand import jsonwire
from farmhand.errors import ShuttingDownError

StreamFormat = Literal["sse", "ndjson"]


@dataclass(frozen=True)
class SSEEvent:
    """An SSE event with a name (`event: <name>`), as the Responses and Messages APIs send;
    a bare dict or string is a `data:` line alone."""

    event: str
    data: dict[str, Any]


STREAM_CUT = "farmhand.stream_cut"
"""Where a stream leaves, in its request's scope, the function that ends it early (the
drain calls it once the response started)."""
CUT_SHORT = "the server shut down before the answer was complete (server.drain_timeout); retry"

StreamItem = dict[str, Any] | str | SSEEvent
ErrorItems = Callable[[BaseException], Sequence[StreamItem]]
ErrorResponse = Callable[[BaseException], Response]

CONTENT_TYPES: dict[StreamFormat, bytes] = {
    "sse": b"text/event-stream; charset=utf-8",
    "ndjson": b"application/x-ndjson",
}


FLUSH_BYTES = 64 * 1024
"""Pending bytes past which the producer sends them itself instead of running ahead of a
slow client."""


def encode(item: StreamItem, form: StreamFormat) -> bytes:
    """One object as the bytes on the wire."""
    if isinstance(item, SSEEvent):
        return b"event: " + item.event.encode() + b"\ndata: " + jsonwire.dumps(item.data) + b"\n\n"
    data = item.encode() if isinstance(item, str) else jsonwire.dumps(item)
    return b"data: " + data + b"\n\n" if form == "sse" else data + b"\n"


class CorkedBody:
    """The response body, written in as few sends as the producer allows.

    `write` only queues. A writer task (`run`) sends what is queued once the producer
    awaits something, which in asyncio is the only time another task can run; so what the
    producer rendered in one go (the chunks of one network read) goes out together, and
    nothing waits longer than the producer's next await."""

    def __init__(self, send: Send) -> None:
        self._send = send
        self._pending: list[bytes] = []
        self._size = 0
        # asyncio's own primitives: uvicorn runs on asyncio, and anyio's cost a backend
        # lookup each time they are made or used, for every batch of every stream.
        self._queued = asyncio.Event()
        self._sending = asyncio.Lock()

    def write(self, data: bytes) -> None:
        self._pending.append(data)
        self._size += len(data)
        self._queued.set()

    @property
    def backed_up(self) -> bool:
        return self._size > FLUSH_BYTES

    async def run(self) -> None:
        """The writer task; runs until cancelled (cancel it only after `flush(last=True)`)."""
        while True:
            await self._queued.wait()
            self._queued.clear()
            await self.flush()

    async def flush(self, *, last: bool = False) -> None:
        """Sends what is queued now; `last` ends the body."""
        async with self._sending:  # one send at a time, in order
            data = b"".join(self._pending)
            self._pending.clear()
            self._size = 0
            if data or last:
                await self._send(
                    {"type": "http.response.body", "body": data, "more_body": not last}
                )


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
        headers: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__()
        self.items = items
        self.form = form
        self.error_response = error_response
        self.error_items = error_items
        self.closing = closing
        self.on_disconnect = on_disconnect
        self.extra_headers = [(k.encode(), v.encode()) for k, v in (headers or {}).items()]
        self.disconnected = False
        self.cut_short = False

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        body = CorkedBody(send)
        streaming = asyncio.current_task()

        async def watch() -> None:
            while (await receive())["type"] != "http.disconnect":
                pass
            self.disconnected = True
            if streaming is not None:
                streaming.cancel()

        def cut_short() -> None:
            self.cut_short = True
            if streaming is not None:
                streaming.cancel()

        scope[STREAM_CUT] = cut_short
        # asyncio's task group, not anyio's: anyio formats the cancelling task's repr
        # into every cancel reason, a cost paid by every stream when its helpers stop.
        try:
            async with asyncio.TaskGroup() as group:
                helpers = (group.create_task(watch()), group.create_task(body.run()))
                await self._stream(scope, receive, send, body)
                for helper in helpers:
                    helper.cancel()
        except asyncio.CancelledError:
            if streaming is None or not (self.disconnected or self.cut_short):
                raise
            streaming.uncancel()  # the client left: the stream ends here, quietly
            if self.cut_short and not self.disconnected:
                await self._end_cut_short(body)
        if self.disconnected and self.on_disconnect is not None:
            self.on_disconnect()

    async def _stream(self, scope: Scope, receive: Receive, send: Send, body: CorkedBody) -> None:
        async def write(item: StreamItem) -> None:
            body.write(encode(item, self.form))
            if body.backed_up:
                await body.flush()

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
        await body.flush(last=True)

    async def _end_cut_short(self, body: CorkedBody) -> None:
        """The stream's last items when the server stops before its end: the dialect's error
        object, then its closing items, so the client reads an ending, not a dropped line."""
        items = [*self.error_items(ShuttingDownError(CUT_SHORT)), *self.closing]
        with suppress(OSError):
            for item in items:
                body.write(encode(item, self.form))
            await body.flush(last=True)

    async def _start(self, send: Send) -> None:
        headers = [(b"content-type", CONTENT_TYPES[self.form]), (b"cache-control", b"no-cache")]
        if self.form == "sse":
            headers.append((b"x-accel-buffering", b"no"))
        headers += self.extra_headers
        await send({"type": "http.response.start", "status": 200, "headers": headers})
