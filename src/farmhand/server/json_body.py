"""Reading a request's JSON body strictly, once, for every route.

Python's `json` accepts what no client means to send and what breaks later: `NaN` and
`Infinity`, lone UTF-16 surrogates (`"\\ud800"`, which cannot be encoded back to UTF-8), and
nesting deep enough to exhaust the recursion limit. Each is a client's mistake, so each is a
400 that says where it is, never a 500 from deep inside a handler.

The gate middleware reads the body with `load_json` before any handler runs and keeps the
value in the request's scope; handlers take it from there with `json_body`.
"""

from __future__ import annotations

import json
from typing import Any

from starlette.requests import Request
from starlette.types import Scope

from farmhand.server.errors import RequestError

MAX_DEPTH = 64
"""Deepest nesting of arrays and objects a body may have (chat bodies need about 8)."""
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


def strict_loads(text: str, what: str) -> Any:
    """`text` as JSON with the same rules as a body (no NaN, no lone surrogates, at most
    MAX_DEPTH levels); RequestError names `what` was wrong."""

    def no_constant(name: str) -> Any:
        raise RequestError(f"{what} contains {name}, which is not a JSON number; send a finite one")

    try:
        value = json.loads(text, parse_constant=no_constant)
    except RecursionError:
        raise _too_deep(what) from None
    except ValueError as exc:
        raise RequestError(f"{what} is not valid JSON ({exc}); send a JSON object") from None
    _check_values(value, what)
    return value


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


def _too_deep(what: str) -> RequestError:
    return RequestError(f"{what} is nested more than {MAX_DEPTH} levels deep; send a flatter one")


def _check_values(value: Any, what: str) -> None:
    """Depth and strings, walked without recursion (the value may be deep)."""
    stack: list[tuple[Any, int, str]] = [(value, 0, "")]
    while stack:
        item, depth, where = stack.pop()
        if isinstance(item, dict):
            if depth >= MAX_DEPTH:
                raise _too_deep(what)
            for key, inner in item.items():
                _check_text(key, where, what)
                stack.append((inner, depth + 1, f"{where}.{key}" if where else key))
        elif isinstance(item, list):
            if depth >= MAX_DEPTH:
                raise _too_deep(what)
            stack.extend((inner, depth + 1, f"{where}[{i}]") for i, inner in enumerate(item))
        elif isinstance(item, str):
            _check_text(item, where, what)


def _check_text(text: str, where: str, what: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        shown = (where if len(where) <= 80 else where[:77] + "...") or "its value"
        raise RequestError(
            f"{what} has a lone UTF-16 surrogate (such as \\ud800) in {shown}, which is not"
            " text; send valid Unicode"
        ) from None
