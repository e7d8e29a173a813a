"""JSON to and from bytes on the hot paths: orjson, with the standard library behind it.

Every chunk of every stream and every request to a backend passes through here, and orjson
does the work at about a fifth of json's cost. The standard library takes over where orjson
refuses a value, so nothing fails that json would have handled: integers past 64 bits,
keys that are not strings, lone surrogates, and broken input (which then gets json's own
error message).
"""

from __future__ import annotations

import json
from typing import Any

import orjson


def dumps(value: Any) -> bytes:
    """Compact JSON as UTF-8 bytes (no spaces; non-ASCII kept, except in the fallback,
    which escapes it so that a lone surrogate still makes valid UTF-8)."""
    try:
        return orjson.dumps(value)
    except TypeError:  # orjson.JSONEncodeError is one
        return json.dumps(value, separators=(",", ":")).encode()


def loads(data: str | bytes) -> Any:
    """The value of a JSON text; json.JSONDecodeError when neither parser reads it."""
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        return json.loads(data)
