"""Strict JSON for everything a client sends: a request body, a tool call's arguments.

Python's `json` accepts what no client means to send and what breaks later: `NaN` and
`Infinity`, lone UTF-16 surrogates (`"\\ud800"`, which cannot be encoded back to UTF-8), and
nesting deep enough to exhaust the recursion limit. Each is a client's mistake, so each is a
RequestError (a 400 over HTTP) that says where it is, never a 500 from deep in a handler.
"""

from __future__ import annotations

import json
import re
from typing import Any

import orjson

from farmhand.errors import RequestError

MAX_DEPTH = 64
"""Deepest nesting of arrays and objects a body may have (chat bodies need about 8)."""


class _NotANumber(ValueError):
    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.name = name


def _refuse_constant(name: str) -> Any:
    raise _NotANumber(name)


# Built once: json.loads with any option builds a new decoder per call.
_decoder = json.JSONDecoder(parse_constant=_refuse_constant)
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def strict_loads(text: str, what: str) -> Any:
    """`text` as JSON with the same rules as a body (no NaN, no lone surrogates, at most
    MAX_DEPTH levels); RequestError names `what` was wrong."""
    try:
        # orjson refuses NaN, Infinity and lone surrogates itself and is fast (this runs on
        # every request); what it refuses goes through json for json's precise messages.
        value = orjson.loads(text)
    except orjson.JSONDecodeError:
        value = _json_loads(text, what)
    if _may_break_a_rule(text):
        _check_values(value, what)
    return value


def _json_loads(text: str, what: str) -> Any:
    try:
        return _decoder.decode(text)
    except _NotANumber as exc:
        raise RequestError(
            f"{what} contains {exc.name}, which is not a JSON number; send a finite one"
        ) from None
    except RecursionError:
        raise _too_deep(what) from None
    except ValueError as exc:
        raise RequestError(f"{what} is not valid JSON ({exc}); send a JSON object") from None


def _may_break_a_rule(text: str) -> bool:
    """False when the text alone shows the value is shallow and has no lone surrogate, so
    the walk over every value can be skipped (most bodies: this runs on every request)."""
    if text.count("{") + text.count("[") > MAX_DEPTH:
        return True
    if "\\u" in text and _SURROGATE_ESCAPE.search(text):
        return True
    if text.isascii():
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


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
