"""Reading one field of a request body, for every dialect: the value, None when it is left
out, or a RequestError that names the field and says what it must be.

Two ways in, one check each: `flag(body, key, ...)`, `integer(...)`, `number(...)` read a
field of a body held as a dict; `Flag`, `Integer(...)`, `Number(...)` are the same checks
as validators of a pydantic model of the body (`Annotated[int | None, Integer(minimum=1)]`),
named after the model's field. A RequestError is no ValueError, so pydantic lets it through
as it is: the client gets the very message and `param` either way.
"""

from __future__ import annotations

from typing import Any, overload

import jsonschema
from pydantic import PlainValidator, ValidationInfo

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
    value = flag_value(body.get(key), key)
    return default if value is None else value


def integer(body: dict[str, Any], key: str, *, minimum: int | None = None) -> int | None:
    return integer_value(body.get(key), key, minimum=minimum)


def number(
    body: dict[str, Any], key: str, *, minimum: float, maximum: float | None = None
) -> float | None:
    return number_value(body.get(key), key, minimum=minimum, maximum=maximum)


def flag_value(value: object, key: str) -> bool | None:
    if value is None:
        return None
    if not isinstance(value, bool):
        raise RequestError(f"{key} must be true or false", param=key)
    return value


def integer_value(value: object, key: str, *, minimum: int | None = None) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise RequestError(f"{key} must be an integer", param=key)
    if minimum is not None and value < minimum:
        raise RequestError(f"{key} must be an integer of at least {minimum}", param=key)
    if abs(value) > LARGEST_INTEGER:
        raise RequestError(f"{key} must be an integer of at most {LARGEST_INTEGER}", param=key)
    return value


def number_value(
    value: object, key: str, *, minimum: float, maximum: float | None = None
) -> float | None:
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


def field_name(info: ValidationInfo) -> str:
    """The body's key a pydantic validator checks (its model field's name)."""
    return info.field_name or "body"


Flag = PlainValidator(lambda value, info: flag_value(value, field_name(info)))
"""A pydantic field that is true, false or left out (None)."""


def Integer(*, minimum: int | None = None) -> PlainValidator:
    """A pydantic field that is a whole number (at least `minimum`) or left out (None)."""
    return PlainValidator(
        lambda value, info: integer_value(value, field_name(info), minimum=minimum)
    )


def Number(*, minimum: float, maximum: float | None = None) -> PlainValidator:
    """A pydantic field that is a number within the bounds, or left out (None)."""
    return PlainValidator(
        lambda value, info: number_value(value, field_name(info), minimum=minimum, maximum=maximum)
    )


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
