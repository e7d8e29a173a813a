"""Reading one scalar field of a request body, for every dialect: the value, None when it is
left out, or a RequestError that names the field and says what it must be."""

from __future__ import annotations

from typing import Any, overload

from farmhand.errors import RequestError


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
    return value


def number(
    body: dict[str, Any], key: str, *, minimum: float, maximum: float | None = None
) -> float | None:
    value = body.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise RequestError(f"{key} must be a number", param=key)
    if value < minimum or (maximum is not None and value > maximum):
        bound = f"between {minimum:g} and {maximum:g}" if maximum is not None else f">= {minimum:g}"
        raise RequestError(f"{key} must be {bound}", param=key)
    return float(value)
