"""The HTTP under every remote backend's turn (OpenAI-compatible servers, Anthropic): one
POST, its answer read as lines, and `HTTPProvider`, the base those providers share.

This is the hot path of `farmhand serve` in front of a model server, so it runs on aiohttp:
bench/serve_overhead.py measured httpx at about five times aiohttp's CPU per request (0.71
against 0.14 ms for a whole answer, 0.98 against 0.24 ms for a 17-chunk stream), which was
most of what farmhand added to a backend's own latency.

Failures come out as one `TransportError` with a `kind`; `HTTPProvider` words the message
with the provider's settings (its base_url, timeouts, name), the ones the user would
change. Redirects are never followed: a 3xx is an answer like any other, which the provider
reports (a backend named by a client's project must not lead farmhand to a host nobody
allowed).

`HTTPProvider` holds what every such provider does the same way: the connection pool and
its timeouts, the POST of a turn, the status check, the answer read whole or line by line
into a `WireTurn` (the provider's wire format), and every failure worded as a
ProviderError (`backend_errors.py`). A provider keeps only its wire format: the request
body, its headers, and the turn that reads its answer.
"""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from collections.abc import AsyncGenerator, AsyncIterator, Mapping, Sequence
from contextlib import aclosing, asynccontextmanager
from typing import Any, Protocol

import aiohttp
import anyio

from farmhand import jsonwire
from farmhand.errors import ProviderError
from farmhand.messages import Message, StreamEvent
from farmhand.providers.backend_errors import (
    retry_after_seconds,
    status_error,
    status_message,
    transport_error,
    transport_message,
)
from farmhand.providers.backend_transport import Timeouts, TransportError
from farmhand.providers.base import GenerationSettings
from farmhand.providers.names import ToolNameMap
from farmhand.tools.definition import ToolDefinition

# Connecting should be quick even when generating is not: an unreachable host should not
# hang for the whole generation timeout.
MAX_CONNECT_TIMEOUT = 30.0
DRAIN_SECONDS = 2.0
"""How long to read on after the answer is complete, so the connection can be reused; a
server that keeps the body open after `[DONE]` only costs this wait."""


class Answer:
    """An answer whose status and headers have arrived; its body is read on demand."""

    def __init__(self, response: aiohttp.ClientResponse) -> None:
        self._response = response
        self.status = response.status
        self.reason = response.reason or ""
        self.content_type = response.headers.get("content-type", "")
        self.location = response.headers.get("location", "")
        """Where a redirect points (redirects are reported, never followed)."""
        self.retry_after = response.headers.get("retry-after", "")
        """How long a 429 or 503 asks to be left alone (seconds or an HTTP date)."""

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

    async def status_of(self, url: str, headers: Mapping[str, str], seconds: float) -> int:
        """The status a GET of `url` answers with inside `seconds`, its body unread (a
        health check)."""
        timeout = aiohttp.ClientTimeout(total=seconds)
        session = self._current_session()
        try:
            async with session.get(
                url, headers=headers, allow_redirects=False, timeout=timeout
            ) as response:
                return response.status
        except aiohttp.ClientError as exc:
            raise _failure(exc) from exc
        except TimeoutError as exc:
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


class WireTurn(Protocol):
    """One answer in a provider's wire format: its lines (or its whole body) in, neutral
    events out. `done`: the stream said it is over (the rest of the body is not read)."""

    @property
    def done(self) -> bool: ...

    def feed_line(self, line: str) -> list[StreamEvent]: ...

    def whole(self, body: bytes) -> list[StreamEvent]:
        """A body that came in one piece (not streamed, or a server that ignored stream)."""
        ...

    def finish(self) -> list[StreamEvent]:
        """The last events, the Finish last of them."""
        ...


class HTTPProvider(ABC):
    """The base of the providers behind a remote HTTP API: one POST to `base_url + path`
    per turn, the answer read into the provider's `WireTurn`, every failure a
    ProviderError. `extra_params` are the request body's defaults, which a turn's own
    settings override."""

    def __init__(
        self,
        *,
        base_url: str,
        path: str,
        model: str,
        name: str,
        api_key: str | None,
        timeout: float,
        extra_params: dict[str, Any] | None,
    ) -> None:
        # base_url is used as given (e.g. http://localhost:8080/v1): guessing a missing /v1
        # would hide a wrong URL behind a confusing 404 later.
        self.base_url = base_url.rstrip("/")
        self.url = f"{self.base_url}{path}"
        self.model = model
        self.name = name
        self.extra_params = dict(extra_params or {})
        self._api_key = api_key
        self._timeouts = Timeouts(read=timeout, connect=min(timeout, MAX_CONNECT_TIMEOUT))
        self._http = BackendHTTP(self._timeouts)

    async def aclose(self) -> None:
        await self._http.aclose()

    @abstractmethod
    def request_body(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolDefinition],
        settings: GenerationSettings,
        names: ToolNameMap,
    ) -> dict[str, Any]:
        """The JSON body of one turn, in the backend's format."""

    @abstractmethod
    def headers(self) -> dict[str, str]:
        """The headers of every request: the stream asked for, the API key."""

    @abstractmethod
    def wire_turn(
        self, names: ToolNameMap, tools: Sequence[ToolDefinition], settings: GenerationSettings
    ) -> WireTurn:
        """What reads one answer of the backend's into events."""

    def reads_whole(self, answer: Answer, settings: GenerationSettings) -> bool:
        """Whether the answer is one body rather than a stream: a server that ignores
        stream=true sends one JSON answer."""
        return answer.content_type.startswith("application/json")

    async def stream(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolDefinition],
        settings: GenerationSettings,
    ) -> AsyncGenerator[StreamEvent, None]:
        """One turn: its body posted, the answer read into the wire turn's events (whole,
        or line by line until the turn is done), then the turn's last events."""
        names = ToolNameMap.for_turn(messages, tools)
        body = self.request_body(messages, tools, settings, names)
        turn = self.wire_turn(names, tools, settings)
        try:
            async with self.answer(body, self.headers()) as answer:
                if self.reads_whole(answer, settings):
                    for event in turn.whole(await answer.body()):
                        yield event
                else:
                    # Closed here, not left to asyncio's finalizer (a task per stream), when
                    # the turn ends the reading before the body does.
                    async with aclosing(answer.lines()) as lines:
                        async for line in lines:
                            for event in turn.feed_line(line):
                                yield event
                            if turn.done:
                                break
                    await answer.drain()
                for event in turn.finish():
                    yield event
        except TransportError as exc:
            raise self.transport_error(exc) from exc

    async def probe(self, seconds: float) -> None:
        """Whether the backend is up, asked cheaply: GET `base_url/models` (every
        OpenAI-compatible server, Ollama's /v1 and Anthropic's API list their models there)
        must answer within `seconds`, with anything but a 429 or a 5xx (a 401 or 404 is a
        server that is up). A BackendFailure says why not."""
        url = f"{self.base_url}/models"
        try:
            status = await self._http.status_of(url, self.headers(), seconds)
        except TransportError as exc:
            raise self.transport_error(exc) from exc
        if status == 429 or status >= 500:
            raise status_error(f"{url} answered HTTP {status} to a health check", status)

    async def fetch(self, url: str, body: dict[str, Any]) -> bytes:
        """The whole body of a request that is not a turn (a token count)."""
        try:
            async with self.answer(body, self.headers(), url) as answer:
                return await answer.body()
        except TransportError as exc:
            raise self.transport_error(exc) from exc

    @asynccontextmanager
    async def answer(
        self, body: dict[str, Any], headers: Mapping[str, str], url: str | None = None
    ) -> AsyncIterator[Answer]:
        """The server's answer to `body` (at `url`, else the turn's), once its status says
        it took the request; any other status is a ProviderError."""
        async with self._http.post(url or self.url, body, headers) as answer:
            if answer.status >= 300:
                raise self.status_error(answer, await answer.body())
            yield answer

    def status_error(self, answer: Answer, body: bytes) -> ProviderError:
        message = status_message(
            answer.status,
            answer.reason,
            body,
            url=self.url,
            base_url=self.base_url,
            model=self.model,
            keyed=bool(self._api_key),
            location=answer.location,
        )
        return status_error(
            message + self.status_note(answer.status),
            answer.status,
            retry_after_seconds(answer.retry_after),
        )

    def status_note(self, status: int) -> str:
        """What this backend adds to an error status's message ("" by default)."""
        return ""

    def transport_error(self, exc: TransportError) -> ProviderError:
        message = transport_message(
            exc, url=self.url, base_url=self.base_url, timeouts=self._timeouts, provider=self.name
        )
        return transport_error(message, exc.kind)


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
