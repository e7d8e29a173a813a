"""Tool calls written as XML-ish tags, one tag per argument: the shared reader.

Several families write a call as a name and one tagged value per argument, and differ only
in the tags:

    Qwen3-Coder   <tool_call><function=NAME><parameter=KEY>VALUE</parameter></function></tool_call>
    MiniMax M2    <minimax:tool_call><invoke name="NAME"><parameter name="KEY">VALUE</parameter>
                  </invoke></minimax:tool_call>
    DeepSeek V3.2 <｜DSML｜function_calls><｜DSML｜invoke name="NAME">
                  <｜DSML｜parameter name="KEY" string="true">VALUE</｜DSML｜parameter>...
    GLM 4.5-4.7   <tool_call>NAME<arg_key>KEY</arg_key><arg_value>VALUE</arg_value></tool_call>
    Hy3           <tool_calls><tool_call>NAME<tool_sep><arg_key>KEY</arg_key>
                  <arg_value>VALUE</arg_value></tool_call></tool_calls>
    Step 3        <｜tool_calls_begin｜><｜tool_call_begin｜>function<｜tool_sep｜>
                  <steptml:invoke name="NAME"><steptml:parameter name="KEY">VALUE
                  </steptml:parameter></steptml:invoke><｜tool_call_end｜><｜tool_calls_end｜>
    Kimi K3       <|open|>tools<|sep|><|open|>call tool="NAME" index="1"<|sep|>
                  <|open|>argument key="KEY" type="string"<|sep|>VALUE<|close|>argument<|sep|>
                  <|close|>call<|sep|><|close|>tools<|sep|>

An `XmlFormat` names the tags; `XmlCallParser` reads any of them while it streams. Values
are bare text, typed by the tool's schema (see `schema_values`). Text before a block, and
after it, is text; inside a block the tags are a call whatever follows: a call that cannot be
read, or that the output ends inside of, comes back with a parse error (never as a call that
runs with half its arguments).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import Any, ClassVar

from farmhand.messages import ToolCall
from farmhand.parsing.base import ParserOptions
from farmhand.parsing.block_json import BlockJsonReading
from farmhand.parsing.broken import BrokenBody, cut_off, unreadable
from farmhand.parsing.json_text import JsonText, escaped
from farmhand.parsing.reader import CallObjectReader
from farmhand.parsing.scan import compact_json, held_prefix
from farmhand.parsing.schema_values import parameter_schema, schema_types, typed_value

# A name or key longer than this is not one: the call is broken.
_HEAD_LIMIT = 256


@dataclass(frozen=True)
class XmlFormat:
    """The tags of one family's calls (see the module docstring for examples)."""

    block_open: str
    block_close: str
    call_open: str  # "" when the name follows `block_open` directly (GLM)
    name_ends: tuple[str, ...]  # what ends the name; stepped over unless `name_end_kept`
    call_close: str  # "" when `block_close` ends the call (GLM)
    param_open: str
    key_end: str
    param_close: str
    head_end: str = ""  # after the key, attributes run to this (`" string="true">`)
    value_open: str = ""  # what comes between the key and the value (`<arg_value>`)
    name_end_kept: bool = False
    # Values written on lines of their own (`>\nVALUE\n</`): those two newlines are framing.
    newline_framed: bool = False
    # A call may come without its block (`<function=...>` alone).
    bare_calls: bool = False
    # The name is the (quoted) value after this in the call's head (`tool="NAME" index=`).
    name_after: str = ""
    # Tokens between calls of a block that are stepped over (Step 3's `<｜tool_call_end｜>`).
    skipped: tuple[str, ...] = ()

    def example(self) -> str:
        name = f' {self.name_after}"NAME"' if self.name_after else "NAME"
        head = self.call_open + name + (self.name_ends[0] if not self.name_end_kept else "")
        param = self.param_open + "KEY" + self.key_end + self.head_end + self.value_open
        return self.block_open + head + param + "VALUE" + self.param_close + self.call_close


class XmlCallParser(BlockJsonReading):
    """A family whose calls are in an `XmlFormat`: set `xml` on the subclass."""

    xml: ClassVar[XmlFormat]
    # Markers in the reply that are not text (a channel's, or a reasoning block's closing
    # tag after calls that ended it early): dropped.
    dropped_markers: ClassVar[tuple[str, ...]] = ()

    def __init__(
        self, known_names: Collection[str] | None = None, *, options: ParserOptions | None = None
    ) -> None:
        super().__init__(known_names, options=options)
        # text | block | name | args | key | value | string_start | string | value_body |
        # json | json_close | broken | after
        self._mode = "text"
        self._name = ""
        self._key = ""
        self._is_string: bool | None = None  # the format's own say on the current value
        self._written = JsonText()  # the arguments' JSON text so far
        self._arguments: dict[str, Any] = {}
        self._string_parts: list[str] = []  # of a string value being read
        self._framed = False  # the string value started with its framing newline
        self._inside_block = False  # the call came inside a block (it ends with block_close)
        self._block_calls = 0  # calls read in the current block
        self._broken = BrokenBody()
        self._reader: CallObjectReader | None = None

    def _openers(self) -> tuple[str, ...]:
        xml = self.xml
        return (xml.block_open, xml.call_open) if xml.bare_calls else (xml.block_open,)

    def _in_text(self, final: bool) -> bool:
        marker = self._text_to_call((*self._openers(), *self.dropped_markers), final)
        if marker is None:
            return False
        if marker in self.dropped_markers:
            return True
        self._inside_block = marker == self.xml.block_open
        self._block_calls = 0
        self._mode = "block" if self._inside_block and self.xml.call_open else "name"
        return True

    def _in_block(self, final: bool) -> bool:
        """Inside a block, between calls: the next call, the block's end, or neither."""
        if not self._skip_whitespace():
            if final and self._inside_block and not self._block_calls:
                self._end_cut_off()  # the output ended right after the block opened
            elif final:
                self._mode = "text"
            return False
        xml = self.xml
        if self._inside_block and self._block_calls == 0 and self._starts("{"):
            self._open_json()
        elif self._starts(xml.call_open):
            self._at += len(xml.call_open)
            self._mode = "name"
        elif any(self._starts(token) for token in xml.skipped):
            self._at += len(next(t for t in xml.skipped if self._starts(t)))
        elif self._inside_block and self._starts(xml.block_close):
            self._at += len(xml.block_close)
            self._inside_block = False
            self._mode = "after"
        elif not final and self._may_become_token():
            return False
        elif self._may_become_token():  # the output ended inside a token of the block
            if self._block_calls:
                self._at = len(self.buf)
            else:
                self._end_cut_off()
            return False
        elif self._inside_block and self._block_calls == 0:
            self._open_broken()  # a block that holds no call it can read
        else:
            self._mode = "text"  # the block ended without its closing tag
        return True

    def _may_become_token(self) -> bool:
        xml = self.xml
        return any(self._may_become(t) for t in (xml.call_open, xml.block_close, *xml.skipped))

    def _in_name(self, final: bool) -> bool:
        self._name = ""
        if not self._skip_whitespace() and not final:
            return False
        if self._inside_block and not self.xml.call_open and self._starts("{"):
            self._open_json()
            return True
        head = self._read_head(self.xml.name_ends, final)
        if head is None:
            return self._mode == "broken"
        name, marker = head
        self._name = _name_in(name, self.xml.name_after)
        if not self._name:
            self._open_broken()
            return True
        if marker and not self.xml.name_end_kept:
            self._at += len(marker)
        self._written = JsonText()
        self._arguments = {}
        self._call_started(self._name)
        self._mode = "args"
        return True

    def _read_head(self, ends: tuple[str, ...], final: bool) -> tuple[str, str] | None:
        """The text up to the first of `ends` (not stepped over) and which one it was; None
        while it may still come, or when the head is too long to be one (the call is broken)
        or the output ended in it (cut off): the mode says which."""
        limit = self._at + _HEAD_LIMIT
        found = None
        for end in ends:
            at = self.buf.find(end, self._at, limit + len(end))
            if at >= 0 and (found is None or at < found[0]):
                found = (at, end)
        if found is None:
            if final:
                self._end_cut_off()
            elif len(self.buf) >= limit:
                self._open_broken()
            return None
        text = self.buf[self._at : found[0]]
        self._at = found[0]
        return text, found[1]

    def _in_args(self, final: bool) -> bool:
        """Inside a call, between arguments: the next one, or the call's end."""
        if not self._skip_whitespace():
            if final:
                self._end_cut_off()
            return False
        xml = self.xml
        close = xml.call_close or xml.block_close
        if self._starts(xml.param_open):
            self._at += len(xml.param_open)
            self._mode = "key"
        elif self._starts(close):
            self._at += len(close)
            self._finish_call()
            self._inside_block = self._inside_block and bool(xml.call_close)
            self._mode = "block" if self._inside_block or xml.call_close else "after"
        elif self._may_become(xml.param_open) or self._may_become(close):
            if final:  # the output ended inside the next tag
                self._end_cut_off()
            return False
        else:
            self._open_broken()
        return True

    def _in_key(self, final: bool) -> bool:
        xml = self.xml
        start = self._at
        head = self._read_head((xml.key_end,), final)
        if head is None:
            return self._mode == "broken"
        self._key = head[0].strip().strip('"')
        self._at += len(xml.key_end)
        self._is_string = None
        if xml.head_end:
            attributes = self._read_head((xml.head_end,), final)
            if attributes is None:
                if self._mode == "key":
                    self._at = start  # the key is read again with its attributes
                return self._mode == "broken"
            self._at += len(xml.head_end)
            self._is_string = _string_attribute(attributes[0])
        # The key is shown as soon as it is read, as llama.cpp shows a partial call.
        self._written.add(("," if self._arguments else "{") + compact_json(self._key) + ":")
        self._call_progress(self._written)
        self._mode = "value"
        return True

    def _in_value(self, final: bool) -> bool:
        xml = self.xml
        if xml.value_open:
            if not self._skip_whitespace() or (
                self._may_become(xml.value_open) and not self._starts(xml.value_open)
            ):
                if final:
                    self._end_cut_off()
                return False
            if not self._starts(xml.value_open):
                self._open_broken()
                return True
            self._at += len(xml.value_open)
        self._start_value()
        return True

    def _start_value(self) -> None:
        """A value the schema (or the format) says is a string streams as it is written."""
        schema = parameter_schema(self.options.tool_schemas, self._name, self._key)
        is_string = self._is_string
        if is_string is None and schema is not None:
            is_string = "string" in schema_types(schema)
        self._string_parts = []
        self._mode = "string_start" if is_string else "value_body"

    def _in_string_start(self, final: bool) -> bool:
        if self._at >= len(self.buf) and not final:
            return False
        self._framed = self.xml.newline_framed and self.buf.startswith("\n", self._at)
        self._at += self._framed
        self._written.add('"')
        self._mode = "string"
        return True

    def _in_string(self, final: bool) -> bool:
        close = self.xml.param_close
        found = self.buf.find(close, self._at)
        if found < 0:
            if final:
                self._end_cut_off()
                return False
            self._string_to(self._before_framing(len(self.buf) - held_prefix(self.buf, (close,))))
            return False
        self._string_to(self._before_framing(found))
        self._at = found + len(close)
        self._written.add('"')
        self._add_argument("".join(self._string_parts))
        return True

    def _before_framing(self, end: int) -> int:
        """A framed value's last newline is framing when the closing tag follows: held."""
        framing = self._framed and end > self._at and self.buf[end - 1] == "\n"
        return end - 1 if framing else end

    def _string_to(self, end: int) -> None:
        if end > self._at:
            text = self.buf[self._at : end]
            self._string_parts.append(text)
            self._written.add(escaped(text))
            self._call_progress(self._written)
            self._at = end

    def _in_value_body(self, final: bool) -> bool:
        start = self._at
        text = self._read_to_stop((self.xml.param_close,), final)
        if text is None:
            return False
        if self._at == len(self.buf) and not self.buf.startswith(self.xml.param_close, self._at):
            self._at = start
            self._end_cut_off()
            return False
        self._at += len(self.xml.param_close)
        if self.xml.newline_framed and text.startswith("\n"):
            text = text[1:].removesuffix("\n")
        schema = parameter_schema(self.options.tool_schemas, self._name, self._key)
        value = typed_value(text, schema, is_string=self._is_string)
        self._written.add(compact_json(value))
        self._add_argument(value)
        return True

    def _add_argument(self, value: Any) -> None:
        self._arguments[self._key] = value
        self._call_progress(self._written)
        self._mode = "args"

    # A block may hold a JSON call object instead (`<tool_call>{"name": ...}</tool_call>`):
    # models trained on Hermes's format write it under these templates too.

    def _open_json(self) -> None:
        self._reader = CallObjectReader()
        self._mode = "json"

    def _in_json(self, final: bool) -> bool:
        reader = self._reader
        assert reader is not None
        read = self._block_json_call(reader, self.xml.block_close, final)
        if read == "wait":
            return False
        if read == "broken":
            self._open_broken()
            return True
        self._block_calls += 1
        self._mode = "json_close"
        return True

    def _in_json_close(self, final: bool) -> bool:
        """After a JSON call: its block's closing tag, if written."""
        close = self.xml.block_close
        if not self._skip_whitespace() and not final:
            return False
        if self._starts(close):
            self._at += len(close)
            self._inside_block = False
            self._mode = "after"
        elif self._may_become(close) and not final:
            return False
        else:
            self._mode = "block" if self.xml.call_open else "after"
        return True

    def _finish_call(self) -> None:
        self._block_calls += 1
        self._written.add("}" if self._arguments else "{}")
        self._call_progress(self._written)
        self._call_done(ToolCall(self._name, dict(self._arguments)))

    def _end_cut_off(self) -> None:
        """The output ended inside a call."""
        self._broken.add(self.buf[self._at :])
        self._at = len(self.buf)
        self._call_done(cut_off(self._name or None, self._broken.text))
        self._broken = BrokenBody()
        self._mode = "after"

    def _open_broken(self) -> None:
        self._broken = BrokenBody()
        self._mode = "broken"

    def _in_broken(self, final: bool) -> bool:
        """A call that cannot be read: it lasts to its block's (or its own) closing tag."""
        xml = self.xml
        stops = tuple(t for t in (xml.call_close, xml.block_close) if t)
        body = self._read_to_stop(stops, final)
        if body is None:
            return False
        self._broken.add(body)
        for stop in stops:
            if self._starts(stop):
                self._at += len(stop)
                break
        name = self._name if self._announced else None
        self._call_done(unreadable(name, self._broken.text, self.xml.example()))
        self._broken = BrokenBody()
        self._inside_block = False
        self._mode = "block" if xml.call_close else "after"
        return True


def _name_in(head: str, after: str) -> str:
    """The name a call's head gives: the head itself, or the value after `after` in it; its
    quotes, if quoted, are not part of it ("" when there is none)."""
    if after:
        at = head.find(after)
        if at < 0:
            return ""
        head = head[at + len(after) :]
    head = head.strip()
    if head.startswith('"'):
        end = head.find('"', 1)
        return head[1:end].strip() if end > 0 else head[1:].strip()
    return head.strip('"')


def _string_attribute(attributes: str) -> bool | None:
    """Whether a parameter's attributes say its value is a string: DSML's `string="true"` /
    `string="false"`, Kimi K3's `type="string"` (any other type is JSON); None if neither."""
    compact = attributes.replace(" ", "")
    if 'string="true"' in compact or 'type="string"' in compact:
        return True
    if 'string="false"' in compact or 'type="' in compact:
        return False
    return None
