"""Typing argument values that a format writes as bare text, by the tool's JSON Schema.

Formats such as Qwen3-Coder's `<parameter=n>5</parameter>` or GLM's `<arg_value>5</arg_value>`
write every value as text: whether `5` is the number 5 or the string "5" is said only by the
tool's parameters schema (ParserOptions.tool_schemas). A parameter typed `string` keeps the
text exactly; any other type reads it as JSON; a value the schema does not describe is JSON
when it reads as JSON, else text.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from farmhand.parsing.scan import WHITESPACE, loads
from farmhand.tools.definition import SEPARATOR

# Python spellings models write for JSON's literals.
_PYTHON_LITERALS = {"True": True, "False": False, "None": None}


def parameter_schema(
    schemas: Mapping[str, Mapping[str, Any]] | None, tool: str, key: str
) -> Mapping[str, Any] | None:
    """The schema of parameter `key` of `tool`, if the tool's schema describes it."""
    properties = (tool_schema(schemas, tool) or {}).get("properties")
    if not isinstance(properties, Mapping):
        return None
    found = properties.get(key)
    return found if isinstance(found, Mapping) else None


def tool_schema(
    schemas: Mapping[str, Mapping[str, Any]] | None, tool: str
) -> Mapping[str, Any] | None:
    """The parameters schema of `tool`, also when it is offered as `server:name` and written
    without the prefix; None when the schemas are not known or do not list it."""
    if not schemas:
        return None
    found = schemas.get(tool)
    if found is None:
        found = next((s for n, s in schemas.items() if n.endswith(SEPARATOR + tool)), None)
    return found if isinstance(found, Mapping) else None


def arguments_fit(arguments: Mapping[str, Any], schema: Mapping[str, Any] | None) -> bool:
    """Whether `arguments` have the keys the schema asks for: every required one, and,
    where it lists properties, at least one of them (none but them when it allows no
    others). Values are not judged (a small model's "5" for 5 is repaired later), nor an
    invented extra key beside listed ones; a definition echoed as a call
    (`{"type": "object", "properties": ...}`) or an example's made-up keys do not fit."""
    if schema is None:
        return True
    required = schema.get("required")
    if isinstance(required, list) and any(k not in arguments for k in required):
        return False
    properties = schema.get("properties")
    if not isinstance(properties, Mapping) or not properties or not arguments:
        return True
    if schema.get("additionalProperties") is False:
        return all(k in properties for k in arguments)
    return any(k in properties for k in arguments)


def schema_types(schema: Mapping[str, Any]) -> set[str]:
    """The JSON types a schema allows (`type`, a list of them, or the `anyOf`/`oneOf` arms);
    an `enum` adds the types of its values."""
    types: set[str] = set()
    declared = schema.get("type")
    if isinstance(declared, str):
        types.add(declared)
    elif isinstance(declared, list):
        types.update(t for t in declared if isinstance(t, str))
    for key in ("anyOf", "oneOf"):
        arms = schema.get(key)
        if isinstance(arms, list):
            for arm in arms:
                if isinstance(arm, Mapping):
                    types |= schema_types(arm)
    enum = schema.get("enum")
    if isinstance(enum, list):
        types.update("string" if isinstance(v, str) else "other" for v in enum)
    return types


def typed_value(
    text: str, schema: Mapping[str, Any] | None, *, is_string: bool | None = None
) -> Any:
    """The value `text` stands for. `is_string` is the format's own say, when it has one
    (DeepSeek's DSML marks each parameter `string="true"` or `"false"`)."""
    if is_string is None and schema is not None:
        types = schema_types(schema)
        if "string" in types:
            return text
        is_string = False if types else None
    if is_string:
        return text
    stripped = text.strip(WHITESPACE)
    if stripped in _PYTHON_LITERALS:
        return _PYTHON_LITERALS[stripped]
    value, ok = loads(stripped)
    return value if ok else text
