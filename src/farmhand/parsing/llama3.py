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

A reply that opens with a Python list of calls, `[f(a=1), g(b="x")]` (how Llama 3.2 writes
calls when prompted for them, as Llama 4 does), is read as Llama 4's (see `llama4`).
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import replace

from farmhand.messages import ToolCall
from farmhand.parsing.base import ParserOptions, call_from_object, is_known_tool
from farmhand.parsing.broken import cut_off, not_a_call_object, unreadable
from farmhand.parsing.call_head import CallHead
from farmhand.parsing.llama4 import Llama4Parser
from farmhand.parsing.python_calls import (
    BUILTIN_CALL,
    BUILTIN_CALL_PREFIX,
    PYTHON_TAG,
    PythonCallArguments,
    RawCodeParser,
    builtin_call,
)
from farmhand.parsing.pythonic import opens_with_calls
from farmhand.parsing.reader import CallObjectReader
from farmhand.parsing.scan import WHITESPACE, held_prefix

LLAMA3_ASSISTANT = "<|start_header_id|>assistant<|end_header_id|>\n\n"

_STRING = r'"((?:[^"\\]|\\.)*)"'
_TYPE = r'(?:"type"\s*:\s*"function"\s*,\s*)?'
LLAMA3_NAME = re.compile(r"\s*\{\s*" + _TYPE + r'"name"\s*:\s*' + _STRING)
LLAMA3_ARGS = re.compile(
    r"\s*\{\s*" + _TYPE + r'"name"\s*:\s*"(?:[^"\\]|\\.)*"\s*,\s*"(?:parameters|arguments)"\s*:'
)
_DECIDE_LIMIT = 256  # how much after the tag may be read before code is assumed
_CALL_OBJECT = '{"name": ..., "parameters": {...}}'


class Llama3Parser(RawCodeParser):
    family = "llama3_x"
    assistant_start = (LLAMA3_ASSISTANT,)

    def __init__(
        self, known_names: Collection[str] | None = None, *, options: ParserOptions | None = None
    ) -> None:
        super().__init__(known_names, options=options)
        self._mode = (
            "start"  # start | pythonic | text | head | object | tag | builtin | code | after
        )
        self._ws: list[str] = []  # whitespace after text, taken by a call if one follows
        self._out: list[str] = []  # text certain in this step, emitted at once
        self._head: CallHead | None = None
        self._head_read = 0
        self._reader: CallObjectReader | None = None
        self._name = ""
        self._python_args: PythonCallArguments | None = None
        self._pythonic: Llama4Parser | None = None

    def _advance(self, final: bool) -> None:
        self._run_modes(final)
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

    def _in_start(self, final: bool) -> bool:
        """The reply's start: a Python list of calls is read as Llama 4's; else text."""
        opens = opens_with_calls(self.buf[:256], final)
        if opens is None:
            return False
        if opens:
            # The reasoning, if any, was split off already: the reader only reads the calls.
            options = replace(self.options, reasoning_format="none", thinking_forced_open=False)
            self._pythonic = Llama4Parser(options=options)
        self._mode = "pythonic" if opens else "text"
        return True

    def _in_pythonic(self, final: bool) -> bool:
        reader = self._pythonic
        assert reader is not None
        events = reader.feed(self.buf) + (reader.finish() if final else [])
        self.buf = ""
        for event in events:
            self._add(event)
        return False

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
                self._call_done(cut_off(reader.name, reader.scanner.raw))
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
                self._call_done(unreadable(None, PYTHON_TAG, "a call or code after <|python_tag|>"))
                self._mode = "after"
            return False
        if rest.startswith("{"):
            self._open_object()
            return True
        match = BUILTIN_CALL.match(rest)
        if match:
            self._name = match.group(1)
            self._call_started(self._name)
            self.buf = rest[match.end() :]
            self._python_args = PythonCallArguments()
            self._mode = "builtin"
            return True
        prefix = BUILTIN_CALL_PREFIX.match(rest)
        if not final and len(rest) < _DECIDE_LIMIT and prefix and prefix.end() == len(rest):
            return False
        self._open_code()
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
    value, ok = reader.value()
    call = call_from_object(value) if ok else None
    if call is not None:
        return call
    if isinstance(value, dict) and isinstance(value.get("name"), str) and value["name"]:
        # Keys a call does not have: keep the call the model meant, and ignore them.
        arguments = value.get("parameters", value.get("arguments"))
        call = call_from_object({"name": value["name"], "arguments": arguments})
        if call is not None:
            return call
    return not_a_call_object(reader.name, reader.scanner.raw, json_ok=ok, example=_CALL_OBJECT)
