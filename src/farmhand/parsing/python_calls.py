"""Calls written as Python: raw code for the python tool, and built-in tool calls.

Llama 3.1 writes `<|python_tag|>` before either; Functionary writes code after the same tag
(v3.1) or after `>>>python` (v3.2).
- Raw code runs to the end of the output and is a call to the python tool, `{"code": code}`.
- `tool.call(key="value", ...)` calls a built-in tool (brave_search, wolfram_alpha, ...) with
  its keyword arguments, Python literals read with `ast` (never run).
"""

from __future__ import annotations

import ast
import json
import re
import warnings
from collections.abc import Collection
from typing import Any

from farmhand.messages import ToolCall
from farmhand.parsing.arg_text import ArgumentText
from farmhand.parsing.base import FamilyParser, is_known_tool
from farmhand.parsing.broken import BrokenBody, unreadable

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
        self.arguments = ArgumentText('{"code":"')

    def add(self, text: str) -> None:
        if text:
            self._code.append(text)
            self.arguments.add_string_part(text)

    def compact_from(self, start: int) -> str:
        """The partial arguments from character `start` on (see JsonScanner.compact_from)."""
        return self.arguments.compact_from(start)

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
    """Finds the `)` that closes a Python call's arguments, fed a piece at a time (or, with
    `stops=",)"`, the end of one argument's value)."""

    def __init__(self, stops: str = ")") -> None:
        self.depth = 0
        self.quote = ""
        self.escape = False
        self.parts: list[str] = []
        self._stops = stops
        self.stopped_by = ""  # the character that ended the text

    @property
    def text(self) -> str:
        return "".join(self.parts)

    def feed(self, text: str, start: int = 0) -> int | None:
        """The offset just past the closing character, or None for more."""
        for i in range(start, len(text)):
            ch = text[i]
            if self.quote:
                if self.escape:
                    self.escape = False
                elif ch == "\\":
                    self.escape = True
                elif ch == self.quote:
                    self.quote = ""
            elif ch in "\"'":
                self.quote = ch
            elif self.depth == 0 and ch in self._stops:
                self.parts.append(text[start:i])
                self.stopped_by = ch
                return i + 1
            elif ch in "([{":
                self.depth += 1
            elif ch in ")]}":
                self.depth = max(0, self.depth - 1)
        self.parts.append(text[start:])
        return None


# How long a keyword may be: past this, what is read is not keyword arguments.
_KEY_LIMIT = 128
KEYWORD_CALL = 'name(key=value, ...) with literal values, like f(city="Paris", days=3)'


class KeywordArguments:
    """A Python call's keyword arguments, `key=value, ...)`, fed a piece at a time from just
    after the `(`, and written as JSON while they stream: `{"key": ` once a key is read, its
    value once the value ends. Values are Python (or JSON) literals, read with `ast`."""

    def __init__(self) -> None:
        self.arguments = ArgumentText()
        self.values: dict[str, Any] = {}
        self.readable = True
        self.written = BrokenBody()  # the start of the raw text, quoted by errors
        self._key: list[str] = []
        self._value: PythonCallArguments | None = None

    def feed(self, text: str, start: int = 0) -> int | None:
        """Read `text[start:]`: the offset just past the call's `)`, or None for more."""
        end = self._read(text, start)
        self.written.add(text[start:end])
        return end

    def call(self, name: str, written: str) -> ToolCall:
        if not self.readable:
            return unreadable(name, written + self.written.text, KEYWORD_CALL)
        return ToolCall(name, self.values)

    def _read(self, text: str, i: int) -> int | None:
        while i < len(text):
            if self._value is not None:
                end = self._value.feed(text, i)
                if end is None:
                    return None
                i = end
                if not self._end_value(self._value):
                    return i
                continue
            ch = text[i]
            if ch == "=":
                i += 1
                self._start_value("".join(self._key).strip())
            elif ch == ")":
                self._close()
                return i + 1
            elif (ch.isalnum() or ch in "_ \t\r\n") and len(self._key) < _KEY_LIMIT:
                self._key.append(ch)
                i += 1
            else:
                self._give_up()  # a positional argument, or not a call at all
        return None

    def _start_value(self, key: str) -> None:
        if not self.readable or not key.isidentifier():
            self._give_up()
            return
        self.arguments.add(("{" if not self.values else ", ") + json.dumps(key) + ": ")
        self.values[key] = None
        self._value = PythonCallArguments(stops=",)")

    def _end_value(self, value: PythonCallArguments) -> bool:
        """Take the value just read; False when it closed the call."""
        key = "".join(self._key).strip()
        self._key = []
        self._value = None
        if self.readable:
            decoded, ok = literal_value(value.text)
            if ok:
                self.values[key] = decoded
                self.arguments.add_value(decoded)
            else:
                self.readable = False
        if value.stopped_by == ")":
            self._close()
            return False
        return True

    def _close(self) -> None:
        if "".join(self._key).strip():
            self.readable = False  # a positional argument
        if self.readable:
            self.arguments.add("}" if self.values else "{}")

    def _give_up(self) -> None:
        """Not keyword arguments: skip to the `)` that closes the call (quotes respected)."""
        self.readable = False
        self._key = []
        self._value = PythonCallArguments(stops=")")


def _parse_quietly(source: str) -> ast.Expression:
    """`source` parsed as an expression; a model's odd escapes (`"\\ "`) are no warning to print."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ast.parse(source, mode="eval")


def literal_value(text: str) -> tuple[Any, bool]:
    """A Python (or JSON) literal's value as JSON data; `(None, False)` if it is not one."""
    source = text.strip()
    try:
        tree = _parse_quietly(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None, False
    return _literal(tree.body, source)


def builtin_call(name: str, arguments: str) -> ToolCall:
    """`name(arguments)` as a call, its keyword arguments read as literals (never run)."""
    written = f"{name}.call({arguments})"
    expected = f'keyword arguments with literal values, like {name}.call(query="...")'
    source = f"f({arguments})"
    try:
        tree = _parse_quietly(source)
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
