"""The transport types of the HTTP providers: how a request to a backend failed, and its
timeouts (their own module: `backend_http` raises them, `backend_errors` words them)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

FailureKind = Literal[
    "connect", "connect_timeout", "read_timeout", "closed", "broke_off", "invalid_url", "other"
]


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
