"""Servers reached over SSE (the 2024-11-05 HTTP+SSE transport), still common in the wild."""

from __future__ import annotations

from typing import Any

import httpx2
from mcp.client.sse import sse_client

from farmhand.toolsets.mcp.challenge import Challenge
from farmhand.toolsets.mcp.http import HTTP_TIMEOUT


def sse(
    url: str,
    headers: dict[str, str],
    auth: httpx2.Auth | None = None,
    challenge: Challenge | None = None,
) -> Any:
    """The SDK's SSE transport: a GET event stream for answers, POSTs for requests."""

    def client(
        headers: dict[str, str] | None = None,
        timeout: httpx2.Timeout | None = None,
        auth: httpx2.Auth | None = None,
    ) -> httpx2.AsyncClient:
        hooks = {"response": [challenge.seen]} if challenge is not None else None
        return httpx2.AsyncClient(
            headers=headers, timeout=timeout or HTTP_TIMEOUT, auth=auth, event_hooks=hooks
        )

    return sse_client(url, headers=headers or None, auth=auth, httpx_client_factory=client)
