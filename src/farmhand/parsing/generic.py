"""llama.cpp's generic format, for templates it does not know: the reply is one JSON object,

    {"tool_call": {"name": "f", "arguments": {...}}}
    {"tool_calls": [{"name": "f", "arguments": {...}, "id": "..."}, ...]}
    {"response": "text"}

(what llama.cpp's grammar constrains such models to write). The response is streamed as its
JSON string is decoded; a response that is not a string is shown as indented JSON. A reply
that does not start like one of these objects is plain text. Under `tool_call(s)` the model
meant a call, so one that cannot be read becomes a call with a parse error.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection
from dataclasses import replace
from typing import Any

from farmhand.messages import ToolCall
from farmhand.parsing.base import FamilyParser, ParserOptions, call_from_object
from farmhand.parsing.broken import broken_call, cut_off, not_a_call_object
from farmhand.parsing.reader import CallObjectReader
from farmhand.parsing.scan import WHITESPACE, JsonScanner, loads

_KEYS = ("tool_call", "tool_calls", "response")
# The object's head, decided within this many characters.
HEAD_LIMIT = 256
_HEAD = re.compile(r'\{\s*"(tool_calls?|response)"\s*:')
_HEAD_SO_FAR = re.compile(r'\{\s*(?:"(?P<key>[a-z_]*)(?P<closed>"\s*)?)?')
_STRING = r'"(?:[^"\\]|\\.)*"'
_ID = r'"id"\s*:\s*"(?P<id>(?:[^"\\]|\\.)*)"\s*,\s*'
_ANY_ID = r'"id"\s*:\s*' + _STRING + r"\s*,\s*"
NAME = re.compile(r"\s*\{\s*(?:" + _ID + r')?"name"\s*:\s*"(?P<name>(?:[^"\\]|\\.)*)"')
ARGS = re.compile(
    r"\s*\{\s*(?:" + _ANY_ID + r')?"name"\s*:\s*' + _STRING
    + r"\s*,\s*(?:" + _ANY_ID + r')?"(?:arguments|parameters)"\s*:'
)  # fmt: skip
_CALL_KEYS = ("name", "arguments", "parameters", "id", "type", "function")
_NOT_A_LIST = 'tool_calls must be a list of call objects [{"name": ...}, ...]'
_NOT_AN_OBJECT = 'a tool call must be a JSON object like {"name": ..., "arguments": {}}'
_SPECIAL = re.compile(r'["\\]')
_HEX4 = re.compile(r"[0-9a-fA-F]{4}")
_WINDOW = 4096
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f"}


class GenericParser(FamilyParser):
    family = "generic"

    def __init__(
        self, known_names: Collection[str] | None = None, *, options: ParserOptions | None = None
    ) -> None:
        # llama.cpp constrains this format to JSON from the reply's first token, so a prompt
        # that opened reasoning does not apply (a leading <think> block is still split off).
        options = replace(options or ParserOptions(), thinking_forced_open=False)
        super().__init__(known_names, options=options)
        self._mode = "start"  # start | head | json | after | text
        self._lead = ""  # whitespace before the object
        self._outer = JsonScanner()
        # Inside the object: call / list_open / list / list_call / response / string /
        # other (a response that is not a string) / rest (nothing more to read).
        self._sub = "rest"
        self._reader = CallObjectReader(NAME, ARGS)
        self._escape = ""  # a string escape still being read
        self._high: int | None = None  # a high surrogate waiting for its pair
        self._other: list[str] = []

    def _in_start(self, final: bool) -> bool:
        stripped = self.buf.lstrip(WHITESPACE)
        self._lead += self.buf[: len(self.buf) - len(stripped)]
        self.buf = stripped
        if not stripped and not final:
            return False
        self._mode = "head" if stripped.startswith("{") else "text"
        return True

    def _in_head(self, final: bool) -> bool:
        head = self.buf[:HEAD_LIMIT]
        match = _HEAD.match(head)
        if match:
            key = match.group(1)
            self._outer.feed(head[: match.end()])
            self.buf = self.buf[match.end() :]
            self._lead = ""
            self._sub = {"tool_call": "call", "tool_calls": "list_open"}.get(key, "response")
            self._mode = "json"
            return True
        if not final and len(head) < HEAD_LIMIT and _may_become_head(head):
            return False
        self._mode = "text"
        return True

    def _in_json(self, final: bool) -> bool:
        end = self._outer.feed(self.buf)
        piece = self.buf if end is None else self.buf[:end]
        self.buf = self.buf[len(piece) :]
        self._read(piece)
        if end is not None:
            self._object_ended()
            self._mode = "after"
            return True
        if final:
            self._cut_off()
        return False

    def _in_text(self, final: bool) -> bool:
        self._text(self._lead + self.buf)
        self._lead = self.buf = ""
        return False

    # Inside the object.

    def _read(self, piece: str) -> None:
        """Read a piece of the object's text (after its head), which the outer scanner has
        already seen."""
        pos = 0
        while pos < len(piece):
            sub = self._sub
            if sub in ("call", "list_call"):
                pos = self._read_call(piece, pos)
            elif sub == "string":
                pos = self._read_string(piece, pos)
            elif sub == "other":
                self._other.append(piece[pos:])
                return
            elif sub == "rest":
                return
            elif piece[pos] in WHITESPACE:
                pos += 1
            else:
                pos = self._read_between(piece, pos)

    def _read_between(self, piece: str, pos: int) -> int:
        """At a value's first character, in list_open / list / response."""
        ch, sub = piece[pos], self._sub
        if sub == "response":
            self._sub = "string" if ch == '"' else "other"
            return pos + 1 if ch == '"' else pos
        if ch == "{":
            self._reader = CallObjectReader(NAME, ARGS)
            self._sub = "list_call"
            return pos
        if sub == "list_open" and ch == "[":
            self._sub = "list"
            return pos + 1
        if sub == "list" and ch == ",":
            return pos + 1
        if sub == "list_open":  # neither a list nor an object
            self._report_broken(broken_call(None, _NOT_A_LIST))
        self._sub = "rest"  # the list ended (or went astray: what follows is not read)
        return pos

    def _read_call(self, piece: str, pos: int) -> int:
        reader = self._reader
        # A window at a time: a piece holding many calls is not copied once per call.
        stop = min(len(piece), pos + _WINDOW)
        end = reader.feed(piece[pos:stop])
        if reader.invalid:
            self._report_broken(broken_call(None, _NOT_AN_OBJECT))
            self._sub = "rest"
            return len(piece)
        if reader.name is not None:
            self._call_started(reader.name, reader.call_id)
            self._call_progress(reader)
        if end is None:
            return stop
        value, ok = reader.value()
        self._call_done(_call_of(value, ok, reader))
        self._sub = "list" if self._sub == "list_call" else "rest"
        return pos + end

    def _read_string(self, piece: str, pos: int) -> int:
        """Decode the response string, emitting its text as it is read."""
        while pos < len(piece):
            if self._escape:
                self._escape += piece[pos]
                pos += 1
                if self._escape[1] == "u" and len(self._escape) < 6:
                    continue
                escape, self._escape = self._escape, ""
                self._decoded_escape(escape)
                continue
            special = _SPECIAL.search(piece, pos)
            stop = special.start() if special else len(piece)
            self._decoded(piece[pos:stop])
            if special is None:
                return stop
            if piece[stop] == '"':
                self._unpaired()
                self._sub = "rest"
                return stop + 1
            self._escape = "\\"
            pos = stop + 1
        return pos

    def _decoded_escape(self, escape: str) -> None:
        if escape[1] != "u":
            self._decoded(_ESCAPES.get(escape[1], escape[1]))
            return
        if not _HEX4.fullmatch(escape[2:]):
            self._decoded(escape)
            return
        code = int(escape[2:], 16)
        if 0xD800 <= code < 0xDC00:
            self._unpaired()
            self._high = code
        elif 0xDC00 <= code < 0xE000:
            high, self._high = self._high, None
            if high is None:
                self._text("\ufffd")
            else:
                self._text(chr(0x10000 + ((high - 0xD800) << 10) + (code - 0xDC00)))
        else:
            self._decoded(chr(code))

    def _decoded(self, text: str) -> None:
        if text:
            self._unpaired()
            self._text(text)

    def _unpaired(self) -> None:
        """A high surrogate not followed by its pair stands for an unreadable character."""
        if self._high is not None:
            self._high = None
            self._text("\ufffd")

    def _object_ended(self) -> None:
        if self._sub in ("call", "list_call"):
            self._cut_off()
        elif self._sub == "other":
            value, ok = loads(self._outer.raw)
            if ok and isinstance(value, dict) and "response" in value:
                response = value["response"]
                self._text(json.dumps(response, indent=2, ensure_ascii=False))
            else:
                self._text("".join(self._other).rstrip(WHITESPACE + "}"))
        self._sub = "rest"

    def _cut_off(self) -> None:
        """The output ended inside the object."""
        if self._sub in ("call", "list_call"):
            reader = self._reader
            self._report_broken(cut_off(reader.name, reader.scanner.raw, "write the whole call"))
        elif self._sub == "string":
            self._decoded(self._escape)
            self._unpaired()
            self._escape = ""
        elif self._sub == "other":
            self._text("".join(self._other).strip())
        self._sub = "rest"

    def _report_broken(self, call: ToolCall) -> None:
        self._call_started(call.name)
        self._call_done(call)


def _may_become_head(head: str) -> bool:
    match = _HEAD_SO_FAR.fullmatch(head)
    if not match or match.group("key") is None:
        return match is not None
    key = match.group("key")
    if match.group("closed"):
        return key in _KEYS
    return any(k.startswith(key) for k in _KEYS)


def _call_of(value: Any, ok: bool, reader: CallObjectReader) -> ToolCall:
    if isinstance(value, dict):
        call = call_from_object({k: v for k, v in value.items() if k in _CALL_KEYS})
        if call is not None:
            return call
    return not_a_call_object(reader.name, reader.scanner.raw, json_ok=ok)
