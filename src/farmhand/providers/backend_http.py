"""The HTTP under every OpenAI-compatible turn: one POST, its answer read as lines.

This is the hot path of `farmhand serve` in front of a model server, so it runs on aiohttp:
bench/serve_overhead.py measured httpx at about five times aiohttp's CPU per request (0.71
against 0.14 ms for a whole answer, 0.98 against 0.24 ms for a 17-chunk stream), which was
most of what farmhand added to a backend's own latency.

Failures come out as one `TransportError` with a `kind`; the provider words the message,
since only it knows which setting the user should change. Redirects are never followed: a
3xx is an answer like any other, which the provider reports (a backend named by a client's
project must not lead farmhand to a host nobody allowed).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, Literal

import aiohttp
import anyio

from farmhand import jsonwire

FailureKind = Literal[
    "connect", "connect_timeout", "read_timeout", "closed", "broke_off", "invalid_url", "other"
]

DRAIN_SECONDS = 2.0
"""How long to read on after the answer is complete, so the connection can be reused; a
server that keeps the body open after `[DONE]` only costs this wait."""


class TransportError(Exception):
    """The request failed before or while its answer arrived."""

    def __init__(self, kind: FailureKind, detail: str) -> None:
        super().__init__(detail)
        self.kind = kind
        self.detail = detail


@dataclass(frozen=True)
class Timeouts:
    read: float
    """Seconds the server may stay silent (between chunks, or before the first)."""
    connect: float


class Answer:
    """An answer whose status and headers have arrived; its body is read on demand."""

    def __init__(self, response: aiohttp.ClientResponse) -> None:
        self._response = response
        self.status = response.status
        self.reason = response.reason or ""
        self.content_type = response.headers.get("content-type", "")
        self.location = response.headers.get("location", "")
        """Where a redirect points (redirects are reported, never followed)."""

    async def body(self) -> bytes:
        return await self._response.read()

    async def lines(self) -> AsyncGenerator[str, None]:
        """The body's lines that are not blank, without their line ends, as they arrive
        (blank lines only separate SSE events: every other chunk of a stream is one)."""
        pending = b""
        async for chunk in self._response.content.iter_any():
            *lines, pending = (pending + chunk).split(b"\n")
            for line in lines:
                if line := line.rstrip(b"\r"):
                    yield line.decode("utf-8", "replace")
        if pending := pending.rstrip(b"\r"):
            yield pending.decode("utf-8", "replace")

    async def drain(self) -> None:
        """Read what is left of the body (bounded by DRAIN_SECONDS) so the connection goes
        back to the pool instead of being closed."""
        if self._response.content.at_eof():
            return
        with anyio.move_on_after(DRAIN_SECONDS):
            await self._response.content.read()


class BackendHTTP:
    """A pool of connections to one backend; created lazily inside the running event loop."""

    def __init__(self, timeouts: Timeouts) -> None:
        self._timeout = aiohttp.ClientTimeout(
            total=None, connect=timeouts.connect, sock_read=timeouts.read
        )
        self._session: aiohttp.ClientSession | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def _current_session(self) -> aiohttp.ClientSession:
        loop = asyncio.get_running_loop()
        if self._session is None or self._session.closed or self._loop is not loop:
            # A provider can outlive an event loop (tests, `farmhand eval` runs); a session
            # belongs to the loop it was made in.
            self._session, self._loop = aiohttp.ClientSession(timeout=self._timeout), loop
        return self._session

    async def aclose(self) -> None:
        """Closes the pooled connections (a later request opens new ones)."""
        session, self._session = self._session, None
        if session is not None and self._loop is asyncio.get_running_loop():
            await session.close()

    @asynccontextmanager
    async def post(
        self, url: str, body: Mapping[str, Any], headers: Mapping[str, str]
    ) -> AsyncIterator[Answer]:
        """POST `body` as JSON; the answer once its status and headers are in."""
        data = jsonwire.dumps(body)
        sent = {"Content-Type": "application/json", **headers}
        try:
            response = await self._send(url, data, sent)
            try:
                yield Answer(response)
            finally:
                response.release()
        except aiohttp.ClientError as exc:
            raise _failure(exc) from exc
        except TimeoutError as exc:  # aiohttp's timeouts are both, older ones only this
            raise TransportError("read_timeout", str(exc) or "timed out") from exc

    async def _send(self, url: str, data: bytes, headers: Mapping[str, str]) -> Any:
        session = self._current_session()
        try:
            return await session.post(url, data=data, headers=headers, allow_redirects=False)
        except aiohttp.ClientConnectorError:
            raise  # nothing was sent: no connection could be made
        except (aiohttp.ServerDisconnectedError, aiohttp.ClientOSError):
            # A kept-alive connection the server closed as it was reused (its idle timeout,
            # or llama-server closing right after an answer): the request never reached it,
            # so send it once more on a new connection. If the server is really gone, this
            # try fails to connect and says so.
            pass
        try:
            return await session.post(url, data=data, headers=headers, allow_redirects=False)
        except aiohttp.ServerDisconnectedError:
            raise TransportError(
                "closed", "the server closed the connection twice without answering"
            ) from None


def _failure(exc: aiohttp.ClientError) -> TransportError:
    detail = str(exc) or type(exc).__name__
    if isinstance(exc, aiohttp.ConnectionTimeoutError):
        return TransportError("connect_timeout", detail)
    if isinstance(exc, aiohttp.SocketTimeoutError | aiohttp.ServerTimeoutError):
        return TransportError("read_timeout", detail)
    if isinstance(exc, aiohttp.InvalidURL | aiohttp.NonHttpUrlClientError):
        return TransportError("invalid_url", detail)
    if isinstance(exc, aiohttp.ClientConnectorError):
        return TransportError("connect", detail)
    if isinstance(
        exc, aiohttp.ServerDisconnectedError | aiohttp.ClientPayloadError | aiohttp.ClientOSError
    ):
        return TransportError("broke_off", detail)
    return TransportError("other", f"{type(exc).__name__}: {detail}")
