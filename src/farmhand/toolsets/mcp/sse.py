"""Servers reached over SSE (the 2024-11-05 HTTP+SSE transport), still common in the wild."""

from __future__ import annotations

from typing import Any

from mcp.client.sse import sse_client


def sse(url: str, headers: dict[str, str]) -> Any:
    """The SDK's SSE transport: a GET event stream for answers, POSTs for requests."""
    return sse_client(url, headers=headers or None)
