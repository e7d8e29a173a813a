"""One error answer before a dialect shapes it: status, message and OpenAI's `type`, `param`
and `code`. `server/errors.py` makes it from an exception; each dialect's `errors.py` renders
it as that API's error object."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ApiError:
    status: int
    message: str
    type: str
    param: str | None = None
    code: str | None = None


ErrorBody = Callable[[ApiError], dict[str, Any]]
"""A dialect's error object for an ApiError."""
