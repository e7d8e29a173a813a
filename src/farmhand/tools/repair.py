"""Calls that miss their tool's schema the way small models often do, repaired.

- A number where the schema takes a string is written as one (`"value": 25` for a string
  `value`, at any depth): a tool's own validation would refuse it for no good reason.
- A list where the schema takes one value is one call per item: `years: [10, 20, 30]` for
  an integer `years` asks for three calls, and the model packed them into one. Lists of the
  same length are taken pairwise; a one-item list is one value.

A call is changed only when it does not fit its schema and every repaired call does;
anything else stays as written, for the router's check to tell the model what to fix.

One change needs no misfit: a whole number where the schema says `format: float` (or
`double`) is written as a float (`[1, 3]` as `[1.0, 3.0]`). JSON Schema's `number` admits
both, but a tool that declared a float (a Python function's `float`, as BFCL's are) may
check the type.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from farmhand.messages import ToolCall
from farmhand.tools.definition import ToolDefinition
from farmhand.tools.schema import validate_arguments

SCALARS = ("string", "integer", "number", "boolean")
FLOAT_FORMATS = ("float", "double")
MAX_CALLS = 16  # a list longer than this is not read as calls


def repaired(call: ToolCall, schema: Mapping[str, Any] | None) -> list[ToolCall]:
    """The calls `call` stands for: itself, or its repair (see the module's text)."""
    if schema is None or call.parse_error:
        return [call]
    floats = _walked(call.arguments, schema, _as_float)
    if json.dumps(floats) != json.dumps(call.arguments):  # 1.0 and 1 compare equal
        call = ToolCall(call.name, floats, id=call.id)
    tool = ToolDefinition(call.name, parameters=dict(schema))
    if validate_arguments(tool, call.arguments) is None:
        return [call]
    arguments = _walked(call.arguments, schema, _as_string)
    calls = [dict(a) for a in _fanned_out(arguments, schema)]
    if all(validate_arguments(tool, a) is None for a in calls):
        first = ToolCall(call.name, calls[0], id=call.id)
        return [first, *(ToolCall(call.name, a) for a in calls[1:])]
    return [call]


def _walked(value: Any, schema: Any, leaf: Callable[[Any, Mapping[str, Any]], Any]) -> Any:
    """`value` with `leaf(item, its schema)` applied to every scalar in it, at any depth."""
    if not isinstance(schema, Mapping):
        return value
    if isinstance(value, Mapping):
        fields = schema.get("properties")
        fields = fields if isinstance(fields, Mapping) else {}
        return {k: _walked(v, fields.get(k), leaf) for k, v in value.items()}
    if isinstance(value, list):
        return [_walked(v, schema.get("items"), leaf) for v in value]
    return leaf(value, schema)


def _as_string(value: Any, schema: Mapping[str, Any]) -> Any:
    number = isinstance(value, int | float) and not isinstance(value, bool)
    return str(value) if number and schema.get("type") == "string" else value


def _as_float(value: Any, schema: Mapping[str, Any]) -> Any:
    whole = isinstance(value, int) and not isinstance(value, bool)
    typed = schema.get("type") == "number" and schema.get("format") in FLOAT_FORMATS
    return float(value) if whole and typed else value


def _fanned_out(arguments: Any, schema: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    if not isinstance(arguments, Mapping):
        return [arguments]
    fields = schema.get("properties")
    fields = fields if isinstance(fields, Mapping) else {}
    packed = {
        key: value
        for key, value in arguments.items()
        if isinstance(value, list) and value and _scalar(fields.get(key))
    }
    sizes = {len(v) for v in packed.values()} - {1}
    if not packed or len(sizes) > 1 or max(sizes, default=1) > MAX_CALLS:
        return [arguments]
    count = max(sizes, default=1)
    return [
        {
            k: (packed[k][i if len(packed[k]) > 1 else 0] if k in packed else v)
            for k, v in arguments.items()
        }
        for i in range(count)
    ]


def _scalar(schema: Any) -> bool:
    return isinstance(schema, Mapping) and schema.get("type") in SCALARS
