"""Reading a call written as one JSON object whose keys the template chose.

`{"name": ..., "arguments": {...}}` is one choice; Command R writes `tool_name` and
`parameters` after a `tool_call_id`, Apertus makes the name the object's only key. The
object streams through a CallObjectReader whose head patterns are built from those keys, so
the name and the arguments' pieces are known before the object closes.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection
from functools import lru_cache
from typing import Any

from farmhand.messages import ToolCall
from farmhand.parsing.base import is_known_tool
from farmhand.parsing.derived.analysis import Derived
from farmhand.parsing.reader import CallObjectReader

_STRING = r'"(?:[^"\\]|\\.)*"'
# A key and a scalar value written before the name or the arguments (`"tool_call_id": "0"`).
_FIELD = rf"\s*{_STRING}\s*:\s*(?:{_STRING}|[-\w.]+)"


@lru_cache(maxsize=32)
def _head_patterns(
    name_key: str, args_key: str, id_key: str
) -> tuple[re.Pattern[str], re.Pattern[str]]:
    """Patterns for the object's head up to the end of the name (and its id, written
    before it), and up to the colon before the arguments."""
    if not name_key:
        name = re.compile(r'\s*\{\s*"(?P<name>(?:[^"\\]|\\.)*)"')
        return name, re.compile(rf"{name.pattern}\s*:")
    key, args = re.escape(json.dumps(name_key)), re.escape(json.dumps(args_key))
    fields = rf"{_FIELD}\s*,"
    if id_key:
        call_id = re.escape(json.dumps(id_key))
        fields = rf'\s*{call_id}\s*:\s*"(?P<id>(?:[^"\\]|\\.)*)"\s*,|{fields}'
    name = re.compile(rf'\s*\{{(?:{fields})*?\s*{key}\s*:\s*"(?P<name>(?:[^"\\]|\\.)*)"')
    return name, re.compile(rf"{name.pattern}(?:\s*,{_FIELD})*?\s*,\s*{args}\s*:")


class JsonCallReader:
    """One call object, streamed: its name once its head is read, its arguments' text as it
    grows, and the call when it closes (None if it is not a call of this format)."""

    def __init__(self, derived: Derived, known_names: Collection[str] | None) -> None:
        self._derived = derived
        self._known = known_names
        name_re, args_re = _head_patterns(derived.name_key, derived.args_key, derived.id_key)
        self._reader = CallObjectReader(name_re, args_re)
        keys = f'"{derived.name_key}": NAME, "{derived.args_key}": {{...}}'
        self.expected = "{" + (keys if derived.name_key else '"NAME": {...}') + "}"

    @property
    def name(self) -> str | None:
        return self._reader.name

    @property
    def call_id(self) -> str | None:
        return self._reader.call_id

    @property
    def raw(self) -> str:
        return self._reader.scanner.raw

    def compact_from(self, start: int) -> str:
        return self._reader.compact_from(start)

    def feed(self, text: str) -> int | None:
        return self._reader.feed(text)

    def call(self) -> ToolCall | None:
        value, ok = self._reader.value()
        if not ok or not isinstance(value, dict):
            return None
        d = self._derived
        if d.name_key:
            name, arguments = value.get(d.name_key), value.get(d.args_key, {})
        elif len(value) == 1:
            name, arguments = next(iter(value.items()))
        else:
            return None
        if not isinstance(name, str) or not name:
            return None
        if self._known is not None and not is_known_tool(name, self._known):
            return None
        call_id = value.get(d.id_key) if d.id_key else None
        extra = {"id": str(call_id)} if call_id not in (None, "") else {}
        return _with_arguments(name, arguments, extra)


def _with_arguments(name: str, arguments: Any, extra: dict[str, str]) -> ToolCall:
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except (json.JSONDecodeError, RecursionError):
            error = f"the arguments of {name} are not valid JSON: {arguments[:200]}"
            return ToolCall(name, {}, parse_error=error, **extra)
    if not isinstance(arguments, dict):
        error = f"the arguments of {name} must be a JSON object"
        return ToolCall(name, {}, parse_error=error, **extra)
    return ToolCall(name, arguments, **extra)
