"""Servers reached over streamable HTTP: the current revision and the SDK 2.x stateless one
(which `mcp.Client` negotiates by itself)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx2
from mcp.client.streamable_http import streamable_http_client

from farmhand.toolsets.mcp.challenge import Challenge

# The SDK's own defaults: requests time out after 30 s, a response stream may idle for 300 s
# (tool calls have their own, shorter timeout above this).
HTTP_TIMEOUT = httpx2.Timeout(30.0, read=300.0)


@asynccontextmanager
async def streamable_http(
    url: str,
    headers: dict[str, str],
    auth: httpx2.Auth | None = None,
    challenge: Challenge | None = None,
) -> AsyncIterator[Any]:
    # The SDK leaves a client it was given open; this one lives exactly as long as the session.
    hooks = {"response": [challenge.seen]} if challenge is not None else None
    async with (
        httpx2.AsyncClient(
            headers=headers or None, timeout=HTTP_TIMEOUT, auth=auth, event_hooks=hooks
        ) as http,
        streamable_http_client(url, http_client=http) as streams,
    ):
        yield streams
