"""Calls written as Python: raw code for the python tool, and built-in tool calls.

Llama 3.1 writes `<|python_tag|>` before either; Functionary writes code after the same tag
(v3.1) or after `>>>python` (v3.2).
- Raw code runs to the end of the output and is a call to the python tool, `{"code": code}`.
- `tool.call(key="value", ...)` calls a built-in tool (brave_search, wolfram_alpha, ...) with
  its keyword arguments, Python literals read with `ast` (never run).
"""

from __future__ import annotations

import ast
import bisect
import json
import re
from collections.abc import Collection
from typing import Any

from farmhand.messages import ToolCall
from farmhand.parsing.base import FamilyParser, is_known_tool
from farmhand.parsing.broken import unreadable

PYTHON_TAG = "<|python_tag|>"
BUILTIN_CALL = re.compile(r"(\w+)\s*\.\s*call\(")
# What may still grow into `name.call(`.
BUILTIN_CALL_PREFIX = re.compile(r"\w+\s*(?:\.\s*(?:c(?:a(?:l(?:l)?)?)?)?)?")


# ---- Raw code. ----


def code_tool(known_names: Collection[str] | None) -> str:
    """The tool raw code is a call to: python, or code_interpreter when only that is offered."""
    if (
        known_names is not None
        and not is_known_tool("python", known_names)
        and is_known_tool("code_interpreter", known_names)
    ):
        return "code_interpreter"
    return "python"


class RawCode:
    """Code written after a family's python marker, to the end of the output: a call to the
    python tool with `{"code": code}`. Its partial arguments are the JSON text so far, as
    llama.cpp shows them (`{"code":"...`, not closed)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._code: list[str] = []
        self._escaped: list[str] = ['{"code":"']
        self._starts: list[int] = [0]  # where each escaped piece starts in the whole text
        self._length = len(self._escaped[0])

    def add(self, text: str) -> None:
        if text:
            self._code.append(text)
            # JSON escapes each character on its own, so escaping piece by piece gives the
            # same text as escaping the whole.
            piece = json.dumps(text, ensure_ascii=False)[1:-1]
            self._escaped.append(piece)
            self._starts.append(self._length)
            self._length += len(piece)

    def compact_from(self, start: int) -> str:
        """The partial arguments from character `start` on (see JsonScanner.compact_from)."""
        if start >= self._length:
            return ""
        at = bisect.bisect_right(self._starts, start) - 1
        head = self._escaped[at][start - self._starts[at] :]
        return head + "".join(self._escaped[at + 1 :])

    def call(self) -> ToolCall:
        return ToolCall(self.name, {"code": "".join(self._code)})


class RawCodeParser(FamilyParser):
    """A family parser (written as modes) in which a marker may start raw code: the family
    calls `_open_code()` past the marker, and mode "code" takes the rest of the output."""

    _code: RawCode | None = None

    def _open_code(self) -> None:
        self._code = RawCode(code_tool(self.options.known_names))
        self._call_started(self._code.name)
        self._mode = "code"

    def _in_code(self, final: bool) -> bool:
        code = self._code
        assert code is not None
        code.add(self.buf)
        self.buf = ""
        self._call_progress(code)
        if final:
            self._call_done(code.call())
        return False


# ---- Built-in tool calls: `name.call(key="value", ...)`. ----


class PythonCallArguments:
    """Finds the `)` that closes a Python call's arguments, fed a piece at a time."""

    def __init__(self) -> None:
        self.depth = 0
        self.quote = ""
        self.escape = False
        self.parts: list[str] = []

    @property
    def text(self) -> str:
        return "".join(self.parts)

    def feed(self, text: str) -> int | None:
        """The offset just past the closing `)`, or None for more."""
        for i, ch in enumerate(text):
            if self.quote:
                if self.escape:
                    self.escape = False
                elif ch == "\\":
                    self.escape = True
                elif ch == self.quote:
                    self.quote = ""
            elif ch in "\"'":
                self.quote = ch
            elif ch in "([{":
                self.depth += 1
            elif ch in ")]}":
                if self.depth == 0 and ch == ")":
                    self.parts.append(text[:i])
                    return i + 1
                self.depth = max(0, self.depth - 1)
        self.parts.append(text)
        return None


def builtin_call(name: str, arguments: str) -> ToolCall:
    """`name(arguments)` as a call, its keyword arguments read as literals (never run)."""
    written = f"{name}.call({arguments})"
    expected = f'keyword arguments with literal values, like {name}.call(query="...")'
    source = f"f({arguments})"
    try:
        tree = ast.parse(source, mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return unreadable(name, written, expected)
    node = tree.body
    if (
        not isinstance(node, ast.Call)
        or not isinstance(node.func, ast.Name)
        or node.args
        or any(k.arg is None for k in node.keywords)
    ):
        return unreadable(name, written, expected)
    values: dict[str, Any] = {}
    for keyword in node.keywords:
        assert keyword.arg is not None
        value, ok = _literal(keyword.value, source)
        if not ok:
            return unreadable(name, written, expected)
        values[keyword.arg] = value
    return ToolCall(name, values)


def _literal(node: ast.expr, source: str) -> tuple[Any, bool]:
    """A literal's value as JSON data (JSON's true/false/null accepted too)."""
    try:
        value = ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        segment = ast.get_source_segment(source, node)
        try:
            value = json.loads(segment) if segment is not None else None
        except (json.JSONDecodeError, RecursionError):
            return None, False
        return value, segment is not None
    return _as_json(value)


def _as_json(value: Any) -> tuple[Any, bool]:
    if value is None or isinstance(value, str | bool | int | float):
        return value, True
    if isinstance(value, list | tuple):
        items = [_as_json(v) for v in value]
        return [v for v, _ in items], all(ok for _, ok in items)
    if isinstance(value, dict):
        pairs = {k: _as_json(v) for k, v in value.items()}
        ok = all(isinstance(k, str) and good for k, (_, good) in pairs.items())
        return {k: v for k, (v, _) in pairs.items()}, ok
    return None, False
