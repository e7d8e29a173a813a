"""Fixtures: server-everything over HTTP and SSE, one per test module."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from tests.support.real_servers import everything_over


@pytest.fixture(scope="module")
def everything_http() -> Iterator[str]:
    """server-everything over streamable HTTP, bound to 127.0.0.1; yields its /mcp URL."""
    for url in everything_over("streamableHttp"):
        yield f"{url}/mcp"


@pytest.fixture(scope="module")
def everything_sse() -> Iterator[str]:
    """server-everything over SSE, bound to 127.0.0.1; yields its /sse URL."""
    for url in everything_over("sse"):
        yield f"{url}/sse"
