"""Llama 3.x tool calls: JSON `{"name": ..., "parameters": {...}}`, and `<|python_tag|>`.

The Llama 3.1-3.3 templates ask for a call as a bare JSON object,
`{"name": <function>, "parameters": <dict>}` (written `"arguments"` by some fine-tunes, with a
`"type": "function"` key first by others). It carries no marker of its own, so such an
object is a call only when its head has that shape and, when the tools are known, it names
one of them; anything else is text. Several calls may follow each other, separated by
whitespace or `;`. Whitespace before a call is taken with it.

After `<|python_tag|>` (the token Llama 3.1 writes before built-in tool calls) comes:
- a JSON call object as above;
- `tool.call(key="value", ...)`, a built-in tool (brave_search, wolfram_alpha,
  code_interpreter, ...) with its keyword arguments (Python literals, read with `ast`);
- anything else: code, to the end of the output, for the python tool (`{"code": code}`).
The tag marks a call, so there the name is taken as written and a call that cannot be read
becomes a call with a parse error.
"""

from __future__ import annotations

import ast
import bisect
import json
import re
from collections.abc import Callable, Collection
from typing import Any

from farmhand.messages import ToolCall
from farmhand.parsing.base import FamilyParser, ParserOptions, call_from_object, is_known_tool
from farmhand.parsing.reader import CallObjectReader
from farmhand.parsing.scan import held_prefix

PYTHON_TAG = "<|python_tag|>"
LLAMA3_ASSISTANT = "<|start_header_id|>assistant<|end_header_id|>\n\n"
WHITESPACE = " \t\r\n"

_STRING = r'"((?:[^"\\]|\\.)*)"'
_TYPE = r'(?:"type"\s*:\s*"function"\s*,\s*)?'
LLAMA3_NAME = re.compile(r"\s*\{\s*" + _TYPE + r'"name"\s*:\s*' + _STRING)
LLAMA3_ARGS = re.compile(
    r"\s*\{\s*" + _TYPE + r'"name"\s*:\s*"(?:[^"\\]|\\.)*"\s*,\s*"(?:parameters|arguments)"\s*:'
)
_BUILTIN_CALL = re.compile(r"(\w+)\s*\.\s*call\(")
# What may still grow into `name.call(`.
_BUILTIN_CALL_PREFIX = re.compile(r"\w+\s*(?:\.\s*(?:c(?:a(?:l(?:l)?)?)?)?)?")
_DECIDE_LIMIT = 256  # how much after the tag may be read before code is assumed


# ---- What several families share: raw code for the python tool, error messages. ----


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


def cut_off(name: str, written: str) -> ToolCall:
    return ToolCall(
        name or "unknown",
        {},
        parse_error=(
            f"the call to {name or 'a tool'} was cut off before it ended: {written.strip()[:300]!r}"
            " (write the whole call, or ask for fewer at once)"
        ),
    )


def unreadable(name: str, written: str, expected: str) -> ToolCall:
    return ToolCall(
        name or "unknown",
        {},
        parse_error=f"could not read the tool call {written.strip()[:300]!r}: expected {expected}",
    )


def call_from_arguments_text(name: str, raw: str, expected: str) -> ToolCall:
    """The call `name` with the JSON arguments text `raw`, or one with a parse error."""
    call = call_from_object({"name": name, "arguments": raw})
    return call if call is not None else unreadable(name, raw, expected)


# ---- Deciding whether a `{` in text opens a call. ----

_KEYS_ARGS = ("parameters", "arguments")
# The heads of a call object, as JSON tokens: punctuation, or the strings a string may be
# (an empty tuple: the name, any string).
_HEADS: tuple[tuple[str | tuple[str, ...], ...], ...] = (
    ("{", ("name",), ":", (), ",", _KEYS_ARGS, ":"),
    ("{", ("type",), ":", ("function",), ",", ("name",), ":", (), ",", _KEYS_ARGS, ":"),
)
_HEAD_LIMIT = 300


class CallHead:
    """Reads `{"name": "<name>", "parameters":` a character at a time, and says as soon as
    it can whether the text starts like that (so text that is not a call is not held)."""

    def __init__(self, accept_name: Callable[[str], bool]) -> None:
        self._accept_name = accept_name
        self._alive = list(range(len(_HEADS)))
        self._token = 0
        self._string: list[str] | None = None  # the string being read
        self._escape = False
        self._read = 0
        self.name = ""
        self.matched = False
        self.failed = False

    def feed(self, text: str, start: int = 0) -> int:
        """Read `text[start:]` until decided; the offset just past the last character read."""
        i = start
        while i < len(text) and not (self.matched or self.failed):
            self._step(text[i])
            i += 1
        return i

    def _expected(self) -> list[str | tuple[str, ...]]:
        return [_HEADS[h][self._token] for h in self._alive]

    def _step(self, ch: str) -> None:
        self._read += 1
        if self._read > _HEAD_LIMIT:
            self.failed = True
            return
        if self._string is not None:
            self._in_string(ch, self._string)
            return
        if ch in WHITESPACE:
            return
        if ch == '"' and any(isinstance(e, tuple) for e in self._expected()):
            self._alive = [h for h in self._alive if isinstance(_HEADS[h][self._token], tuple)]
            self._string = []
        elif ch in "{:," and ch in self._expected():
            self._alive = [h for h in self._alive if _HEADS[h][self._token] == ch]
            self._next()
        else:
            self.failed = True

    def _in_string(self, ch: str, chars: list[str]) -> None:
        if self._escape:
            self._escape = False
        elif ch == "\\":
            self._escape = True
        elif ch == '"':
            self._string = None
            self._end_string("".join(chars))
            return
        chars.append(ch)
        if any(_HEADS[h][self._token] for h in self._alive):  # a key: check it as it grows
            raw = "".join(chars)
            self._alive = [h for h in self._alive if _may_be(_HEADS[h][self._token], raw)]
            if not self._alive:
                self.failed = True

    def _end_string(self, raw: str) -> None:
        kept = []
        for h in self._alive:
            options = _HEADS[h][self._token]
            assert isinstance(options, tuple)
            if options and raw in options:
                kept.append(h)
            elif not options:
                name, ok = _json_string(raw)
                if ok and name and self._accept_name(name):
                    self.name = name
                    kept.append(h)
        self._alive = kept
        if not kept:
            self.failed = True
            return
        self._next()

    def _next(self) -> None:
        self._token += 1
        if any(len(_HEADS[h]) == self._token for h in self._alive):
            self.matched = True


def _may_be(options: str | tuple[str, ...], raw: str) -> bool:
    """Whether a string token that starts `raw` may still be one of `options` (any string
    for the name's empty tuple)."""
    return not options or any(o.startswith(raw) for o in options)


def _json_string(raw: str) -> tuple[str, bool]:
    try:
        value = json.loads('"' + raw + '"')
    except (json.JSONDecodeError, RecursionError):
        return "", False
    return (value, True) if isinstance(value, str) else ("", False)


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


_JSON_NAMES = {"true": True, "false": False, "null": None}


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


# ---- The parser. ----


class Llama3Parser(FamilyParser):
    family = "llama3_x"
    assistant_start = (LLAMA3_ASSISTANT,)

    def __init__(
        self, known_names: Collection[str] | None = None, *, options: ParserOptions | None = None
    ) -> None:
        super().__init__(known_names, options=options)
        self._mode = "text"  # text | head | object | tag | builtin | code | after
        self._ws: list[str] = []  # whitespace after text, taken by a call if one follows
        self._out: list[str] = []  # text certain in this step, emitted at once
        self._head: CallHead | None = None
        self._head_read = 0
        self._reader: CallObjectReader | None = None
        self._name = ""
        self._python_args: PythonCallArguments | None = None
        self._code: RawCode | None = None

    def _advance(self, final: bool) -> None:
        steps = {
            "text": self._in_text,
            "head": self._in_head,
            "object": self._in_object,
            "tag": self._in_tag,
            "builtin": self._in_builtin,
            "code": self._in_code,
            "after": self._in_after,
        }
        while steps[self._mode](final):
            pass
        if final:
            self._out.extend(self._ws)
            self._ws = []
        self._flush()

    # Text, and whitespace that a following call takes.

    def _say(self, text: str) -> None:
        if not text:
            return
        kept = text.rstrip(WHITESPACE)
        if kept:
            self._out.extend(self._ws)
            self._out.append(kept)
            self._ws = []
        if len(kept) < len(text):
            self._ws.append(text[len(kept) :])

    def _flush(self) -> None:
        if self._out:
            self._text("".join(self._out))
            self._out = []

    def _start_call(self) -> None:
        """A call begins: the whitespace before it is its own."""
        self._ws = []
        self._flush()

    # The modes: each consumes from self.buf and returns False when it needs more input.

    def _in_text(self, final: bool) -> bool:
        buf = self.buf
        tag_at = buf.find(PYTHON_TAG)
        pos = 0
        while True:
            brace = buf.find("{", pos, tag_at if tag_at >= 0 else len(buf))
            if brace < 0:
                break
            self._say(buf[pos:brace])
            head = CallHead(self._wanted)
            read = head.feed(buf, brace)
            if head.matched or (not head.failed and not final):
                self.buf = buf[brace:]
                self._head, self._head_read = head, read - brace
                self._mode = "head"
                return True
            self._say("{")
            pos = brace + 1
        if tag_at >= 0:
            self._say(buf[pos:tag_at])
            self._start_call()
            self.buf = buf[tag_at + len(PYTHON_TAG) :]
            self._mode = "tag"
            return True
        end = len(buf) if final else max(pos, len(buf) - held_prefix(buf, (PYTHON_TAG,)))
        self._say(buf[pos:end])
        self.buf = buf[end:]
        return False

    def _wanted(self, name: str) -> bool:
        known = self.options.known_names
        return known is None or is_known_tool(name, known)

    def _in_head(self, final: bool) -> bool:
        """A `{` that may open a call: wait until its head says."""
        head = self._head
        assert head is not None
        self._head_read = head.feed(self.buf, self._head_read)
        if head.matched:
            self._start_call()
            self._open_object()
            self._call_started(head.name)
            return True
        if head.failed or final:
            self._say("{")
            self.buf = self.buf[1:]
            self._mode = "text"
            return True
        return False

    def _open_object(self) -> None:
        self._reader = CallObjectReader(LLAMA3_NAME, LLAMA3_ARGS)
        self._mode = "object"

    def _in_object(self, final: bool) -> bool:
        reader = self._reader
        assert reader is not None
        end = reader.feed(self.buf)
        self.buf = "" if end is None else self.buf[end:]
        if reader.name is not None:
            self._call_started(reader.name)
        self._call_progress(reader)
        if end is None:
            if final:
                self._call_done(cut_off(reader.name or "", reader.scanner.raw))
                self._mode = "after"
            return False
        self._call_done(_object_call(reader))
        self._mode = "after"
        return True

    def _in_tag(self, final: bool) -> bool:
        """After <|python_tag|>: a JSON call, `tool.call(...)`, or code."""
        rest = self.buf.lstrip(WHITESPACE)
        self.buf = rest
        if not rest:
            if final:
                self._call_done(unreadable("", PYTHON_TAG, "a call or code after <|python_tag|>"))
                self._mode = "after"
            return False
        if rest.startswith("{"):
            self._open_object()
            return True
        match = _BUILTIN_CALL.match(rest)
        if match:
            self._name = match.group(1)
            self._call_started(self._name)
            self.buf = rest[match.end() :]
            self._python_args = PythonCallArguments()
            self._mode = "builtin"
            return True
        prefix = _BUILTIN_CALL_PREFIX.match(rest)
        if not final and len(rest) < _DECIDE_LIMIT and prefix and prefix.end() == len(rest):
            return False
        self._code = RawCode(code_tool(self.options.known_names))
        self._call_started(self._code.name)
        self._mode = "code"
        return True

    def _in_builtin(self, final: bool) -> bool:
        arguments = self._python_args
        assert arguments is not None
        end = arguments.feed(self.buf)
        self.buf = "" if end is None else self.buf[end:]
        if end is None:
            if final:
                self._call_done(cut_off(self._name, f"{self._name}.call({arguments.text}"))
                self._mode = "after"
            return False
        self._call_done(builtin_call(self._name, arguments.text))
        self._mode = "after"
        return True

    def _in_code(self, final: bool) -> bool:
        code = self._code
        assert code is not None
        code.add(self.buf)
        self.buf = ""
        self._call_progress(code)
        if final:
            self._call_done(code.call())
            self._mode = "after"
        return False

    def _in_after(self, final: bool) -> bool:
        """Between calls: whitespace and `;` belong to no one."""
        self.buf = self.buf.lstrip(WHITESPACE + ";")
        if not self.buf:
            return False
        self._mode = "text"
        return True


class Llama3BuiltinToolsParser(Llama3Parser):
    """Llama 3.1 / 3.3 with built-in tools (`<|python_tag|>brave_search.call(query="...")`).

    The tag is read the same way by both: a Llama 3 model without built-in tools offered
    still writes it at times, and reading the call it meant lets the loop answer it."""

    family = "llama3_x_builtin_tools"


def _object_call(reader: CallObjectReader) -> ToolCall:
    expected = '{"name": ..., "parameters": {...}}'
    value, ok = reader.value()
    if not ok:
        return unreadable(reader.name or "", reader.scanner.raw, f"a JSON object like {expected}")
    call = call_from_object(value)
    if call is not None:
        return call
    if isinstance(value, dict) and isinstance(value.get("name"), str) and value["name"]:
        # Keys a call does not have: keep the call the model meant, and ignore them.
        arguments = value.get("parameters", value.get("arguments"))
        call = call_from_object({"name": value["name"], "arguments": arguments})
        if call is not None:
            return call
    return unreadable(reader.name or "", reader.scanner.raw, expected)
