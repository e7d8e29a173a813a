"""Argument values written as bare text, typed by the tool's JSON Schema.

Formats that write each argument as text between tags (`<param name="n">5</param>`) do not
say whether `5` is the number 5 or the string "5": the tool's parameters schema does. A
value whose parameter is a string (or whose type is not known) stays text; any other type
is read as JSON when it is JSON (`5`, `true`, `[1, 2]`, `{"a": 1}`), and stays text when not.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from farmhand.parsing.scan import loads


def parameter_types(
    schemas: Mapping[str, Mapping[str, Any]] | None, tool: str, parameter: str
) -> set[str]:
    """The JSON types the schema allows for `parameter` of `tool` (empty: not known)."""
    if not schemas or tool not in schemas:
        return set()
    properties = schemas[tool].get("properties")
    spec = properties.get(parameter) if isinstance(properties, Mapping) else None
    if not isinstance(spec, Mapping):
        return set()
    kinds = spec.get("type")
    if isinstance(kinds, str):
        return {kinds}
    if isinstance(kinds, list):
        return {k for k in kinds if isinstance(k, str)}
    options = spec.get("anyOf") or spec.get("oneOf")
    if isinstance(options, list):
        return {o["type"] for o in options if isinstance(o, Mapping) and "type" in o}
    return set()


def typed_value(text: str, types: set[str]) -> Any:
    """`text` as the value its parameter's types say it is."""
    if not types or "string" in types:
        return text
    value, ok = loads(text.strip())
    return value if ok else text
