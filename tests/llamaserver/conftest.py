from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest
from tests.support.real_servers import free_port


@pytest.fixture
def closed_port() -> int:
    """A loopback port nothing listens on: connecting is refused at once."""
    return free_port()


@pytest.fixture
def silent_port() -> Iterator[int]:
    """A loopback port that accepts connections (the kernel queues them) and never answers."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(8)
        yield int(sock.getsockname()[1])
