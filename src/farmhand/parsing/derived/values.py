"""Argument values written as bare text, typed by the tool's JSON Schema.

`<parameter=n>5</parameter>` is the integer 5 when the schema says `n` is an integer, and
the string "5" when it says string. A string keeps its text exactly, less the one newline
templates write on each side of it; any other type is read as JSON, and stays text when it
is not.
"""

from __future__ import annotations

from typing import Any

from farmhand.parsing.scan import WHITESPACE, loads


def typed_value(text: str, schema_type: Any) -> Any:
    """The value `text` stands for, given its schema `type` (None: unknown)."""
    if text.startswith("\n"):
        text = text[1:]
    if text.endswith("\n"):
        text = text[:-1]
    types = schema_type if isinstance(schema_type, list) else [schema_type]
    if "string" in types:
        return text
    value, ok = loads(text.strip(WHITESPACE))
    if ok and (schema_type is not None or not isinstance(value, str)):
        return value
    return text
