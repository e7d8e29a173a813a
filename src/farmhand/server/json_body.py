"""Reading a request's JSON body strictly, once, for every route.

The rules (no NaN, no lone surrogates, bounded depth) are `dialects.strict_json`'s.

The gate middleware reads the body with `load_json` before any handler runs and keeps the
value in the request's scope; handlers take it from there with `json_body`.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.types import Scope

from farmhand.dialects.strict_json import strict_loads
from farmhand.errors import RequestError

_SCOPE_KEY = "farmhand.json_body"


def load_json(raw: bytes) -> Any:
    """The body's value; RequestError (400) for anything but strict, shallow JSON."""
    if not raw.strip():
        raise RequestError("the request body is empty; send a JSON object")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise RequestError(
            f"the request body is not UTF-8 ({exc.reason}); send UTF-8 JSON"
        ) from None
    return strict_loads(text, "the request body")


def remember(scope: Scope, value: Any) -> None:
    scope.setdefault("state", {})[_SCOPE_KEY] = value


async def json_body(request: Request) -> Any:
    """The body the gate already read and checked (or, outside the gate, read it now)."""
    state = request.scope.get("state") or {}
    if _SCOPE_KEY in state:
        return state[_SCOPE_KEY]
    return load_json(await request.body())


async def json_object(request: Request) -> dict[str, Any]:
    """The body, which must be a JSON object (every route's bodies are)."""
    body = await json_body(request)
    if not isinstance(body, dict):
        raise RequestError("the request body must be a JSON object")
    return body
