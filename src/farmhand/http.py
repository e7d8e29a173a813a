"""One httpx rule every backend client shares: a stale kept-alive connection is retried once."""

from __future__ import annotations

import httpx


async def send(
    client: httpx.AsyncClient, request: httpx.Request, *, stream: bool = False
) -> httpx.Response:
    """`client.send(request)`, sent once more if the server closed the connection before
    sending any response.

    A server closes an idle kept-alive connection after its own timeout (llama-server and
    uvicorn: 5 s, the same as httpx's pool), so a request can leave on a connection that is
    being closed at that moment. httpx does not retry this, and the request never reached
    the server, so sending it again is safe. If the server is really gone, the second try
    fails to connect and says so."""
    try:
        return await client.send(request, stream=stream)
    except httpx.RemoteProtocolError:
        return await client.send(request, stream=stream)
