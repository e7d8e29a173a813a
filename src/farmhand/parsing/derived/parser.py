"""The parser a `Derived` description drives: text, then runs of calls in one of three shapes.

A run of calls opens with the section's or a call's opening marker (matched token by token,
any whitespace between tokens); each call is then read as its shape says: a JSON object
(`json_call`), a name and JSON arguments (`tag_json_args`), or a name and one tag per
argument (`tag_per_arg`, values typed by the tool's schema). After a call its closing
markers are taken if written, and another call may follow. Markup that turns out not to
open a call is text.
"""

from __future__ import annotations

from collections.abc import Collection
from functools import lru_cache
from typing import Any, ClassVar

from farmhand.messages import ToolCall
from farmhand.parsing.base import CursorParser, ParserOptions
from farmhand.parsing.broken import call_from_arguments_text, cut_off, unreadable
from farmhand.parsing.derived.analysis import Derived, analyze
from farmhand.parsing.derived.json_call import JsonCallReader
from farmhand.parsing.derived.markers import is_special, tokens
from farmhand.parsing.derived.values import typed_value
from farmhand.parsing.scan import WHITESPACE, JsonScanner, compact_json

_SPACE_STOPS = (" ", "\n", "\t", "\r")
_CDATA, _CDATA_END = "<![CDATA[", "]]>"


class DerivedParser(CursorParser):
    """Reads the tool calls of a template no family module knows, as `derived` describes.

    A subclass per template sets `derived` (and the reasoning tags and assistant header the
    analysis found); see `derived_class`.
    """

    family = "auto"
    derived: ClassVar[Derived] = Derived("no_calls", "no template was analysed")

    def __init__(
        self, known_names: Collection[str] | None = None, *, options: ParserOptions | None = None
    ) -> None:
        super().__init__(known_names, options=options)
        d = self.derived
        self._section = tokens(d.section_start)
        self._call = tokens(d.call_start)
        self._call_end = tokens(d.call_end)
        self._section_end = tokens(d.section_end)
        bare = d.shape == "json_call" and not self._section and not self._call
        triggers = [t[0] for t in (self._section, self._call) if t] + (["{"] if bare else [])
        self._triggers = tuple(triggers) if d.in_scope else ()
        self._dropped = tuple(m for m in (d.content_start, d.content_end) if m)
        self._mode = "text"
        self._pending: tuple[str, ...] = ()  # opener tokens still to match
        self._anchor: int | None = None  # kept in the buffer: where an opener starts
        self._name = ""
        self._id = ""
        self._args: JsonScanner | None = None
        self._object: JsonCallReader | None = None
        self._values: dict[str, Any] = {}
        self._written = _WrittenArguments()  # the arguments' JSON so far, for deltas
        self._key = ""
        self._in_array = False
        self._bare = False  # the JSON call has no marker of its own (`{` opened it)
        self._cdata = ""
        self._header = ""  # what a tag_json_args call writes between its name and arguments

    def _advance(self, final: bool) -> None:
        # As CursorParser, but the start of an opener being matched is kept:
        # `_anchor` is where (an offset into `self.buf`).
        self._run_modes(final)
        keep = self._at if self._anchor is None else min(self._at, self._anchor)
        self.buf = self.buf[keep:]
        self._at -= keep
        if self._anchor is not None:
            self._anchor -= keep

    # Text, and what opens a run of calls.

    def _in_text(self, final: bool) -> bool:
        marker = self._text_to_marker(self._triggers + self._dropped, final)
        if marker is None:
            return False
        if marker in self._dropped:
            return True
        if marker == "{":
            self._at -= 1
            self._open_call(bare=True)
            return True
        self._anchor = self._at - len(marker)
        if self._section and marker == self._section[0]:
            self._pending = self._section[1:] + self._call
        else:
            self._pending = self._call[1:]
        self._mode = "open"
        return True

    def _in_open(self, final: bool) -> bool:
        matched = self._match(self._pending, final)
        if matched is None:
            return False
        if not matched:
            # Not an opener after all: its first token is text.
            assert self._anchor is not None
            self._at, self._anchor = self._anchor, None
            self._text_to(self._at + 1)
            self._mode = "text"
            return True
        self._anchor = None
        self._open_call(bare=False)
        return True

    def _open_call(self, *, bare: bool) -> None:
        self._name, self._id, self._values = "", "", {}
        self._written = _WrittenArguments()
        if self.derived.shape == "json_call":
            self._mode = "json_start"
            self._bare = bare
        else:
            self._mode = "name"

    def _match(self, wanted: tuple[str, ...], final: bool) -> bool | None:
        """Match `wanted` tokens at the cursor (whitespace between them free): True and
        step past them, False if the text is something else, None while it may still be."""
        at = self._at
        for token in wanted:
            while at < len(self.buf) and self.buf[at] in WHITESPACE:
                at += 1
            if self.buf.startswith(token, at):
                at += len(token)
            elif not final and token.startswith(self.buf[at:]):
                return None
            else:
                return False
        self._at = at
        return True

    def _match_some(self, wanted: tuple[str, ...], final: bool) -> bool | None:
        """Step past as many of `wanted` tokens as are written, in order (closing markers a
        model may leave out); None while that cannot be told yet."""
        for n in range(len(wanted), 0, -1):
            matched = self._match(wanted[:n], final)
            if matched is None:
                return None
            if matched:
                return True
        return False

    # After a call: its closing markers if written, then another call or the run's end.

    def _in_close(self, final: bool) -> bool:
        if self._call_end and self._match_some(self._call_end, final) is None:
            return False
        if not self._skip_whitespace() and not final:
            return False
        if self._call:
            opened = self._match(self._call, final)
            if opened is None:
                return False
            if opened:
                self._open_call(bare=False)
                return True
        if self._section_end and self._match_some(self._section_end, final) is None:
            return False
        self._mode = "after"
        return True

    # A call's name and header (tag shapes).

    def _name_stops(self) -> tuple[str, ...]:
        d = self.derived
        marks = (d.name_end, d.args_start, d.id_start, d.key_start, d.call_end, d.section_end)
        return (*tuple(tokens(m)[0] for m in marks if m), "{", *_SPACE_STOPS)

    def _in_name(self, final: bool) -> bool:
        if not self._name and not self._skip_whitespace():
            return False
        body = self._read_to_stop(self._name_stops(), final)
        if body is None:
            return False
        self._name = body.strip(WHITESPACE)
        if not self._name:
            self._call_done(unreadable(None, body, "a name"))
            self._mode = "after"
            return True
        self._call_started(self._name)
        if self.derived.shape == "tag_json_args":
            self._mode, self._header = "header", ""
        else:
            self._mode = "arg"
        return True

    def _in_header(self, final: bool) -> bool:
        """Between the name and the JSON arguments: an id, or markers to step over."""
        stops = self._header_stops()
        header = self._read_to_stop(stops, final)
        if header is None:
            return False
        self._header += header
        if self._at >= len(self.buf):  # the output ended in the header
            self._call_done(cut_off(self._name, self._header))
            self._mode = "text"
            return False
        self._id = self._header_id(self._header)
        if not self._starts("{"):
            error = f"after the name {self._name} the arguments must follow as a JSON object"
            self._call_done(ToolCall(self._name, {}, parse_error=error))
            self._mode = "close"
            return True
        self._args = JsonScanner()
        self._mode = "json_args"
        return True

    def _header_stops(self) -> tuple[str, ...]:
        """What ends a header: the arguments' `{`, or a closing marker (one a header token
        starts with, DeepSeek R1's ``` before ```json, is not)."""
        d = self.derived
        own = [t for m in (d.name_end, d.id_start, d.id_end, d.args_start) for t in tokens(m)]
        closers = (tokens(m)[0] for m in (d.call_end, d.section_end) if m)
        return ("{", *(c for c in closers if not any(t.startswith(c) for t in own)))

    def _header_id(self, header: str) -> str:
        d = self.derived
        if d.id_start and d.id_start in header:
            rest = header.split(d.id_start, 1)[1]
            return rest.split(d.id_end, 1)[0].strip(WHITESPACE) if d.id_end else rest.strip()
        if d.header_is_id:
            head = tokens(d.call_start)
            prefix = head[-1] if head and not is_special(head[-1]) else ""
            own = header.split(d.args_start, 1)[0] if d.args_start else header
            return prefix + self._name + own.strip(WHITESPACE)
        return ""

    def _in_json_args(self, final: bool) -> bool:
        scanner = self._args
        assert scanner is not None
        end = scanner.feed(self.buf[self._at :])
        if scanner.invalid:
            end = 0
        self._at = len(self.buf) if end is None else self._at + end
        self._call_progress(scanner)
        if end is None:
            if final:
                self._call_done(cut_off(self._name, scanner.raw))
                self._mode = "text"
            return False
        call = call_from_arguments_text(self._name, scanner.raw, "a JSON object")
        self._finish_call(call)
        return True

    def _finish_call(self, call: ToolCall) -> None:
        if self._id and not call.parse_error:
            call = ToolCall(call.name, call.arguments, id=self._id)
        self._call_done(call)
        self._mode = "close"

    # One tag per argument.

    def _in_arg(self, final: bool) -> bool:
        d = self.derived
        if not self._skip_whitespace() and not final:
            return False
        name_end = tokens(d.name_end)
        if name_end and self._match(name_end, final) is None:
            return False
        if not self._skip_whitespace() and not final:
            return False
        opened = self._match(tokens(d.key_start), final)
        if opened is None:
            return False
        if opened:
            self._mode = "key"
            return True
        ended = self._match(self._call_end[:1], final) if self._call_end else False
        if ended is None:
            return False
        if ended:
            self._at -= len(self._call_end[0])
        elif not final and self.buf[self._at :]:
            ended = True  # something else follows: the call ends here
        if final and not ended:
            self._call_done(cut_off(self._name, compact_json(self._values)))
            self._mode = "text"
            return False
        self._finish_call(ToolCall(self._name, dict(self._values)))
        return True

    def _in_key(self, final: bool) -> bool:
        d = self.derived
        key_end = tokens(d.key_end)
        body = self._read_to_stop(key_end[:1] or _SPACE_STOPS, final)
        if body is None:
            return False
        self._key = body.strip(WHITESPACE)
        self._mode = "value_open"
        return True

    def _in_value_open(self, final: bool) -> bool:
        d = self.derived
        if d.value_start:
            if self._read_to_stop((d.value_start,), final) is None:
                return False
            if not self._starts(d.value_start):  # the output ended first
                self._call_done(cut_off(self._name, compact_json(self._values)))
                self._mode = "text"
                return False
            self._at += len(d.value_start)
        elif self._match(tokens(d.key_end), final) is None:
            return False
        self._mode = "value"
        return True

    def _in_value(self, final: bool) -> bool:
        if self._starts(_CDATA):
            self._at += len(_CDATA)
            self._mode = "cdata"
            return True
        if self._may_become(_CDATA) and not final and self._at < len(self.buf):
            return False
        stop = tokens(self.derived.value_end)[:1]
        body = self._read_to_stop(stop, final) if stop else None
        if body is None:
            return False
        self._end_value(body, stop)
        return True

    def _in_cdata(self, final: bool) -> bool:
        """An XML CDATA section: the value is its text, whatever markup it holds."""
        body = self._read_to_stop((_CDATA_END,), final)
        if body is None:
            return False
        self._at += len(_CDATA_END) if self._starts(_CDATA_END) else 0
        self._cdata = body
        self._mode = "value_close"
        return True

    def _in_value_close(self, final: bool) -> bool:
        stop = tokens(self.derived.value_end)[:1]
        if self._read_to_stop(stop, final) is None:
            return False
        self._end_value(self._cdata, stop)
        return True

    def _end_value(self, body: str, stop: tuple[str, ...]) -> None:
        if not stop or not self._starts(stop[0]):
            self._call_done(cut_off(self._name, compact_json(self._values)))
            self._mode = "text"
            return
        self._at += len(stop[0])
        d = self.derived
        schema_type = self._schema_type(self._key)
        value = typed_value(body, schema_type, d.value_lead, d.value_trail)
        # A key written twice is written twice here too: JSON readers keep the last, as
        # the call does.
        self._written.add(("," if self._values else "{") + compact_json(self._key) + ":")
        self._written.add(compact_json(value))
        self._values[self._key] = value
        self._call_progress(self._written)
        self._mode = "arg"

    def _schema_type(self, key: str) -> Any:
        schemas = self.options.tool_schemas or {}
        properties = (schemas.get(self._name) or {}).get("properties") or {}
        prop = properties.get(key)
        return prop.get("type") if isinstance(prop, dict) else None

    # A whole call as JSON.

    def _in_json_start(self, final: bool) -> bool:
        if not self._skip_whitespace():
            if final:
                self._call_done(unreadable(None, "", "a JSON call object"))
            return False
        char = self.buf[self._at]
        if char == "[" and not self._in_array:
            self._in_array = True
            self._at += 1
            return True
        if char == "]" and self._in_array:
            self._in_array = False
            self._at += 1
            self._mode = "close"
            return True
        if char == "," and self._in_array:
            self._at += 1
            return True
        if char != "{":
            if self._bare:
                self._text_to(self._at + 1)
                self._mode = "text"
                return True
            self._in_array = False
            self._mode = "close"
            return True
        self._object = JsonCallReader(self.derived, self.options.known_names)
        self._mode = "object"
        return True

    def _in_object(self, final: bool) -> bool:
        reader = self._object
        assert reader is not None
        end = reader.feed(self.buf[self._at :])
        self._at = len(self.buf) if end is None else self._at + end
        if reader.name is not None and not self._bare:
            self._call_started(reader.name, reader.call_id)
            self._call_progress(reader)
        if end is None:
            if final:
                if self._bare:
                    self._call_dropped()
                    self._text(reader.raw)
                else:
                    self._call_done(cut_off(reader.name, reader.raw))
                self._mode = "text"
            return False
        call = reader.call()
        if call is None and self._bare:
            self._call_dropped()
            self._text(reader.raw)
            self._mode = "text"
            return True
        if self._bare and call is not None:
            self._call_started(call.name, call.id)
            self._call_progress(reader)
        self._call_done(call or unreadable(reader.name, reader.raw, reader.expected))
        self._mode = "json_start" if self._in_array else "close"
        return True


class _WrittenArguments:
    """The JSON of the arguments read so far, `{"a":1,"b":"x"` (a PartialArguments): each
    delta is the pieces added since the last, so many arguments cost no rebuilding."""

    def __init__(self) -> None:
        self._pieces: list[str] = []
        self._length = 0
        self._given = (0, 0)  # (pieces, characters) already given out

    def add(self, piece: str) -> None:
        self._pieces.append(piece)
        self._length += len(piece)

    def compact_from(self, start: int) -> str:
        pieces, length = self._given
        if start != length:  # not where the last delta ended: rebuild (never in practice)
            return "".join(self._pieces)[start:]
        self._given = (len(self._pieces), self._length)
        return "".join(self._pieces[pieces:])


@lru_cache(maxsize=32)
def derived_class(template: str) -> type[DerivedParser] | None:
    """The parser class for `template`'s own format, or None when its shape is not one the
    derived parser reads (cached per template text: the analysis renders it many times)."""
    derived = analyze(template)
    if not derived.in_scope:
        return None
    attributes: dict[str, Any] = {"derived": derived, "assistant_start": derived.assistant_start}
    if derived.reasoning_end:
        attributes["think_open"] = derived.reasoning_start
        attributes["think_close"] = derived.reasoning_end
    return type("TemplateDerivedParser", (DerivedParser,), attributes)
