"""Calls that miss their tool's schema the way small models often do, repaired.

- A number where the schema takes a string is written as one (`"value": 25` for a string
  `value`, at any depth): a tool's own validation would refuse it for no good reason.
- A list where the schema takes one value is one call per item: `years: [10, 20, 30]` for
  an integer `years` asks for three calls, and the model packed them into one. Lists of the
  same length are taken pairwise; a one-item list is one value.

A call is changed only when it does not fit its schema and every repaired call does;
anything else stays as written, for the router's check to tell the model what to fix.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from farmhand.messages import ToolCall
from farmhand.tools.definition import ToolDefinition
from farmhand.tools.schema import validate_arguments

SCALARS = ("string", "integer", "number", "boolean")
MAX_CALLS = 16  # a list longer than this is not read as calls


def repaired(call: ToolCall, schema: Mapping[str, Any] | None) -> list[ToolCall]:
    """The calls `call` stands for: itself, or its repair (see the module's text)."""
    if schema is None or call.parse_error:
        return [call]
    tool = ToolDefinition(call.name, parameters=dict(schema))
    if validate_arguments(tool, call.arguments) is None:
        return [call]
    arguments = _as_strings(call.arguments, schema)
    calls = [dict(a) for a in _fanned_out(arguments, schema)]
    if all(validate_arguments(tool, a) is None for a in calls):
        first = ToolCall(call.name, calls[0], id=call.id)
        return [first, *(ToolCall(call.name, a) for a in calls[1:])]
    return [call]


def _as_strings(value: Any, schema: Any) -> Any:
    if not isinstance(schema, Mapping):
        return value
    if schema.get("type") == "string" and isinstance(value, int | float):
        return value if isinstance(value, bool) else str(value)
    if isinstance(value, Mapping):
        fields = schema.get("properties")
        fields = fields if isinstance(fields, Mapping) else {}
        return {k: _as_strings(v, fields.get(k)) for k, v in value.items()}
    if isinstance(value, list):
        return [_as_strings(v, schema.get("items")) for v in value]
    return value


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
