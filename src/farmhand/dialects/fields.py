"""Reading one field of a request body, for every dialect: the value, None when it is left
out, or a RequestError that names the field and says what it must be."""

from __future__ import annotations

from typing import Any, overload

import jsonschema

from farmhand.errors import RequestError

LARGEST_INTEGER = 2**63 - 1
"""The largest whole number a field takes (what backends and llama.cpp hold): a client
that sends 400 digits gets a 400 naming the field, not an OverflowError further on."""
LARGEST_TIMEOUT_MS = 7 * 24 * 3600 * 1000
"""The longest `tool_timeout` a request may ask for: a week."""


@overload
def flag(body: dict[str, Any], key: str, default: bool) -> bool: ...
@overload
def flag(body: dict[str, Any], key: str, default: None) -> bool | None: ...
def flag(body: dict[str, Any], key: str, default: bool | None) -> bool | None:
    value = body.get(key)
    if value is None:
        return default
    if not isinstance(value, bool):
        raise RequestError(f"{key} must be true or false", param=key)
    return value


def integer(body: dict[str, Any], key: str, *, minimum: int | None = None) -> int | None:
    value = body.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise RequestError(f"{key} must be an integer", param=key)
    if minimum is not None and value < minimum:
        raise RequestError(f"{key} must be an integer of at least {minimum}", param=key)
    if abs(value) > LARGEST_INTEGER:
        raise RequestError(f"{key} must be an integer of at most {LARGEST_INTEGER}", param=key)
    return value


def number(
    body: dict[str, Any], key: str, *, minimum: float, maximum: float | None = None
) -> float | None:
    value = body.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise RequestError(f"{key} must be a number", param=key)
    if isinstance(value, int) and abs(value) > LARGEST_INTEGER:
        raise RequestError(f"{key} is too large a number", param=key)
    if value < minimum or (maximum is not None and value > maximum):
        bound = f"between {minimum:g} and {maximum:g}" if maximum is not None else f">= {minimum:g}"
        raise RequestError(f"{key} must be {bound}", param=key)
    return float(value)


def json_schema(value: dict[str, Any], param: str) -> dict[str, Any]:
    """`value` when it is a valid JSON Schema (an answer's shape: Ollama's `format`, the
    Responses `text.format`), else a RequestError that says where it is wrong."""
    try:
        jsonschema.validators.validator_for(value).check_schema(value)
    except jsonschema.SchemaError as exc:
        where = "/".join(str(p) for p in exc.path) or "top level"
        raise RequestError(
            f"{param} is not a valid JSON Schema ({where}: {exc.message})", param=param
        ) from None
    return value
