"""Argument values written as bare text, typed by the tool's JSON Schema.

`<parameter=n>5</parameter>` is the integer 5 when the schema says `n` is an integer, and
the string "5" when it says string. A string keeps its text exactly, less the whitespace
the template itself writes around values; any other type is read as JSON, and stays text
when it is not.
"""

from __future__ import annotations

from typing import Any

from farmhand.parsing.scan import WHITESPACE, loads


def typed_value(text: str, schema_type: Any, lead: str = "", trail: str = "") -> Any:
    """The value `text` stands for, given its schema `type` (None: unknown), less the
    whitespace the template writes before (`lead`) and after it (`trail`)."""
    if lead and text.startswith(lead):
        text = text[len(lead) :]
    if trail and text.endswith(trail):
        text = text[: len(text) - len(trail)]
    types = schema_type if isinstance(schema_type, list) else [schema_type]
    if "string" in types:
        return text
    value, ok = loads(text.strip(WHITESPACE))
    if ok and (schema_type is not None or not isinstance(value, str)):
        return value
    return text
