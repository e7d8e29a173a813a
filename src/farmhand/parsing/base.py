"""The parser contract, and turning a decoded JSON object into a ToolCall."""

from __future__ import annotations

import json
from collections.abc import Collection
from typing import Any, Protocol

from farmhand.messages import StreamEvent, ToolCall


class ToolCallParser(Protocol):
    """Turns a model's raw output, fed in chunks, into text and tool-call events.

    `feed` returns what became certain with this chunk; `finish` flushes the rest.
    """

    def feed(self, chunk: str) -> list[StreamEvent]: ...

    def finish(self) -> list[StreamEvent]: ...


def call_from_object(obj: Any) -> ToolCall | None:
    """Read `{"name": ..., "arguments": {...}}` (or OpenAI's nested `function` form).

    Returns None when the object does not look like a call at all; a call whose arguments
    cannot be read comes back with `parse_error` set, so the model can be told.
    """
    if not isinstance(obj, dict):
        return None
    if isinstance(obj.get("function"), dict):
        obj = obj["function"]
    name = obj.get("name")
    if not isinstance(name, str) or not name:
        return None
    allowed = {"name", "arguments", "parameters", "id", "type"}
    if set(obj) - allowed:
        return None  # an object with other keys is data the model is showing, not a call
    arguments = obj.get("arguments", obj.get("parameters", {}))
    call_id = obj.get("id")
    extra = {"id": call_id} if isinstance(call_id, str) and call_id else {}
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except json.JSONDecodeError as exc:
            return ToolCall(
                name,
                {},
                parse_error=(
                    f"the arguments of {name} are not valid JSON ({exc.msg}): {arguments[:200]}"
                ),
                **extra,
            )
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        return ToolCall(
            name,
            {},
            parse_error=(
                f"the arguments of {name} must be a JSON object, got {type(arguments).__name__}"
            ),
            **extra,
        )
    return ToolCall(name, arguments, **extra)


def calls_from_json_text(text: str, known_names: Collection[str] | None) -> list[ToolCall] | None:
    """Parse text that is nothing but one or more call objects (or a list of them).

    Returns None unless every object is a call naming a known tool: bare JSON is only a
    call when it can be nothing else.
    """
    decoder = json.JSONDecoder()
    values: list[Any] = []
    pos, end = 0, len(text)
    while True:
        while pos < end and text[pos] in " \t\r\n;,":
            pos += 1
        if pos >= end:
            break
        try:
            value, pos = decoder.raw_decode(text, pos)
        except json.JSONDecodeError:
            # A run of calls whose last one was cut off (the turn hit its token limit):
            # keep the complete ones.
            if values and text[pos] == "{" and _is_truncated(text[pos:]):
                break
            return None
        values.extend(value if isinstance(value, list) else [value])
    return calls_from_values(values, known_names)


def calls_from_values(
    values: list[Any], known_names: Collection[str] | None
) -> list[ToolCall] | None:
    """The calls these decoded JSON values are, or None unless every one is a call naming a
    known tool (any name when `known_names` is None)."""
    calls = [call_from_object(v) for v in values]
    if not calls or any(c is None for c in calls):
        return None
    found = [c for c in calls if c is not None]
    if known_names is not None and not all(is_known_tool(c.name, known_names) for c in found):
        return None
    return found


def is_known_tool(name: str, known_names: Collection[str]) -> bool:
    """True if `name` is a tool, or a tool's name without its `server:` prefix."""
    return name in known_names or any(k.endswith(":" + name) for k in known_names)


def _is_truncated(fragment: str) -> bool:
    """True if `fragment` is the start of a JSON value that simply stopped early."""
    try:
        json.loads(fragment)
    except json.JSONDecodeError as exc:
        # Running out of input shows as an error at the very end, or as a string left open.
        return exc.pos >= len(fragment.rstrip()) or exc.msg.startswith("Unterminated string")
    return False
