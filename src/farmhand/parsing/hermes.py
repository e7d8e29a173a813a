"""Hermes-style tool calls: `<tool_call>{json}</tool_call>` (Hermes 2 Pro / 3, Qwen 2.5).

Models trained on this format drift from it, so the parser reads what they actually write
(the same variants llama.cpp's Hermes parser accepts): the JSON inside other tags (`<tool>`,
`<function_call>`, `<response>`, `<json>`, ...), inside a ```json / ```xml fence, or bare;
and `<function=name>{args}</function>` / `<function name="name">{args}</function>`.

A `<tool_call>` tag is a call whatever follows (a body that cannot be read becomes a call
with a parse error, so the model is told). JSON without a `<tool_call>` tag (in `<tools>`,
the tag of Qwen's tool list, another tag, a fence, or bare) is a call only when it is an
object whose first key is "name" and, when the tools are known, it names one of them: else
it is the model showing data, and stays text. When the tools' schemas are known such an
object is held until it closes and must also fit its tool's schema (`arguments_fit`): a
definition echoed back, or an example with made-up keys, stays text; its JSON broken after
an offered name, or cut off, is still a call with an error. A bare object inside a code
block the model opened as code (```` ```python ````) is code, not a call.

`shape` says which of these wrappers the last call came in (what `farmhand parse` shows).
"""

from __future__ import annotations

import re
from collections.abc import Collection
from typing import ClassVar

from farmhand.messages import ToolCall
from farmhand.parsing.base import FamilyParser, ParserOptions, call_from_object, is_known_tool
from farmhand.parsing.broken import (
    broken_call,
    call_from_arguments_text,
    cut_off,
    not_a_call_object,
)
from farmhand.parsing.reader import CallObjectReader
from farmhand.parsing.scan import WHITESPACE, JsonScanner, compact_json, held_prefix
from farmhand.parsing.schema_values import arguments_fit, tool_schema

TOOL_CALL_TAG = "<tool_call>"
# Tags small models put around call JSON instead of <tool_call>.
OTHER_TAGS = ("<function_call>", "<tool>", "<tools>", "<response>", "<json>", "<xml>", "<JSON>")
FENCE = "```"
FENCE_OPENERS = ("```json\n", "```xml\n", "```\n")
FUNCTION_EQ = "<function="
FUNCTION_NAME = '<function name="'
FUNCTION_END = "</function>"
_FUNCTION_CALL = f"{FUNCTION_EQ}NAME>{{...}}{FUNCTION_END}, with the tool's name"
MARKERS = (TOOL_CALL_TAG, *OTHER_TAGS, FENCE, FUNCTION_EQ, FUNCTION_NAME, "{")
_CALL_HEAD = re.compile(r'\{\s*"name"')
_CALL_HEAD_PREFIXES = re.compile(r'\{\s*(?:"(?:n(?:a(?:m(?:e)?)?)?)?)?$')
_BACKTICKS = re.compile(r"`+")
# The wrappers a call comes in, as `shape` names them.
SHAPES = {TOOL_CALL_TAG: "<tool_call> tag", FENCE: "code fence", "{": "bare JSON"}


def _closing(tag: str) -> str:
    return "</" + tag[1:]


class HermesParser(FamilyParser):
    family = "hermes_2_pro"
    assistant_start = ("<|im_start|>assistant\n",)
    # Tags (of OTHER_TAGS) that are this family's own call tag: a call whatever follows.
    call_tags: ClassVar[tuple[str, ...]] = ()

    def __init__(
        self, known_names: Collection[str] | None = None, *, options: ParserOptions | None = None
    ) -> None:
        super().__init__(known_names, options=options)
        self._mode = "text"  # text | object | function | broken | close
        self._reader: CallObjectReader | None = None
        self._args: JsonScanner | None = None
        self._name = ""
        self._tagged = False  # the current call opened with <tool_call>
        self._closers: list[str] = []  # what may follow the current call: tag, fence
        self._opening = ""  # the text that opened the current call (tag, fence, whitespace)
        self._scan_from = 0
        self._held = False  # the current object is judged whole before it is announced
        self._ticks = 0  # backticks that end the text so far
        self._in_code = False  # the text so far opened a code block it has not closed
        # A fence opened around a call is still open when the next call follows at once
        # (```json {call} {call} ```): that call closes it.
        self._fence_open = False
        self.shape = ""
        """The wrapper the last call came in (`SHAPES`, or the tag it was in)."""

    # The modes: each consumes from self.buf and returns False when it needs more input.

    def _in_text(self, final: bool) -> bool:
        fence_open, self._fence_open = self._fence_open, False
        if fence_open:
            starts = (TOOL_CALL_TAG, *OTHER_TAGS, "{")
            marker = next((t for t in starts if self.buf.startswith(t)), None)
            if marker is None and not final and any(t.startswith(self.buf) for t in starts):
                self._fence_open = True  # a tag cut by the chunk: wait for the rest
                return False
            opened = marker is not None and self._try_open(0, marker, final, in_fence=True)
            if opened:
                return True
            if opened is None:
                self._fence_open = True
                return False
        search_from = 0
        positions: dict[str, int] = {}
        while True:
            found = _earliest(self.buf, search_from, positions)
            if found is None:
                if final:
                    self._emit_text(len(self.buf))
                    return False
                keep = held_prefix(self.buf, MARKERS)
                end = len(self.buf) - keep
                # Whitespace before a bare call is not part of the text: hold it too.
                self._emit_text(len(self.buf[:end].rstrip(WHITESPACE)))
                return False
            index, marker = found
            opened = self._try_open(index, marker, final)
            if opened is None:  # cannot tell yet
                self._emit_text(_text_end(self.buf, index, marker))
                return False
            if opened:
                return True
            search_from = index + 1

    def _try_open(
        self, index: int, marker: str, final: bool, *, in_fence: bool = False
    ) -> bool | None:
        """Open a call at `index` if one starts there: True if opened, False if this is text,
        None when more input is needed to tell. `in_fence`: a fence the last call opened is
        still open around this one."""
        rest = self.buf[index:]
        fence = in_fence
        if marker == FENCE:
            opener = next((o for o in FENCE_OPENERS if rest.startswith(o)), None)
            if opener is None:
                prefix = any(o.startswith(rest) for o in FENCE_OPENERS)
                return None if prefix and not final else False
            fence = True
            skip = len(opener) + _count_ws(rest, len(opener))
            if skip == len(rest):
                return None if not final else False
            tag = next((t for t in (TOOL_CALL_TAG, *OTHER_TAGS) if rest.startswith(t, skip)), None)
            if tag is None and any(t.startswith(rest[skip:]) for t in (TOOL_CALL_TAG, *OTHER_TAGS)):
                return None if not final else False
            marker = tag or "{"
            body_at = skip + (len(tag) if tag else 0)
        elif marker in (FUNCTION_EQ, FUNCTION_NAME):
            self._open_function(index, marker)
            return True
        elif marker == "{" and _fences(self.buf[:index], self._ticks, self._in_code)[1]:
            return False  # code the model is showing, not a call
        else:
            body_at = len(marker) if marker != "{" else 0
        head_at = body_at + _count_ws(rest, body_at)
        head = rest[head_at:]
        if marker == TOOL_CALL_TAG and head and not head.startswith("{"):
            self._open_broken(index, head_at, fence)
            return True
        if not _CALL_HEAD.match(head):
            if not final and (not head or _CALL_HEAD_PREFIXES.match(head)):
                return None
            if marker in self.call_tags and (not head or _CALL_HEAD_PREFIXES.match(head)):
                self._emit_text(index)  # the output ended right after the model's call tag
                self.buf = ""
                self._call_done(cut_off(None, rest))
                return False
            return False
        closers = ([_closing(marker)] if marker != "{" else []) + ([FENCE] if fence else [])
        bare_in_fence = fence and marker == "{"
        self.shape = SHAPES[FENCE] if bare_in_fence else SHAPES.get(marker, marker + " tag")
        self._open_object(
            index,
            index + head_at,
            tagged=marker == TOOL_CALL_TAG or marker in self.call_tags,
            bare=marker == "{" and not fence,
            closers=closers,
        )
        return True

    def _open_object(
        self, start: int, body: int, *, tagged: bool, bare: bool, closers: list[str]
    ) -> None:
        # A bare call takes the whitespace before it (as llama.cpp reads it).
        text_end = len(self.buf[:start].rstrip(WHITESPACE)) if bare else start
        self._text(self.buf[:text_end])
        self._opening = self.buf[text_end:body]
        self.buf = self.buf[body:]
        self._reader = CallObjectReader()
        self._tagged = tagged
        self._held = not tagged and self.options.tool_schemas is not None
        self._closers = closers
        self._mode = "object"

    def _in_object(self, final: bool) -> bool:
        reader = self._reader
        assert reader is not None
        had_name = reader.name is not None
        close_at, readable = self._readable_before_closing_tag()
        end = reader.feed(self.buf[:readable])
        while end is None and close_at >= 0 and reader.scanner.in_string:
            # `</tool_call>` inside a JSON string is part of the value, not the closing tag.
            close = _closing(TOOL_CALL_TAG)
            reader.feed(close)
            self.buf = self.buf[close_at + len(close) :]
            close_at, readable = self._readable_before_closing_tag()
            end = reader.feed(self.buf[:readable])
        if end is None and close_at >= 0:
            # The tag closed inside the JSON: the body is broken, not cut off.
            self.buf = self.buf[close_at + len(_closing(TOOL_CALL_TAG)) :]
            self._call_done(not_a_call_object(reader.name, reader.scanner.raw, json_ok=False))
            self._closers = self._closers[1:]
            self._mode = "close"
            return True
        self.buf = self.buf[readable:] if end is None else self.buf[end:]
        if reader.name is not None and not had_name and not self._wanted(reader.name):
            self._abandon_object(reader)
            return True
        if reader.name is not None and self._wanted(reader.name) and not self._held:
            self._call_started(reader.name)
            self._call_progress(reader)
        if end is None:
            if final:
                self._object_cut_off(reader)
            return False
        value, ok = reader.value()
        call = call_from_object(value) if ok else None
        # Once a call is announced (its head named an offered tool) it ends as a call, even
        # if its body cannot be read: a ToolCallEvent must follow its deltas, and the model
        # is told what to fix instead of its call turning into text. A held object whose
        # head named an offered tool and whose JSON broke was meant as a call too.
        meant = self._tagged or self._announced or (not ok and self._named_offered(reader))
        if call is None and meant:
            call = not_a_call_object(reader.name, reader.scanner.raw, json_ok=ok)
        if call is None or not self._wanted(call.name) or not self._fits(call):
            self._abandon_object(reader)
            return True
        self._held_call_done(call)
        self._mode = "close"
        return True

    def _named_offered(self, reader: CallObjectReader) -> bool:
        return self._held and reader.name is not None and self._wanted(reader.name)

    def _fits(self, call: ToolCall) -> bool:
        """A held call's arguments fit its tool's schema (a broken call is judged by its
        name alone: the model meant it)."""
        if not self._held or call.parse_error is not None:
            return True
        schema = tool_schema(self.options.tool_schemas, self._as_offered(call.name))
        return arguments_fit(call.arguments, schema)

    def _held_call_done(self, call: ToolCall) -> None:
        """A call, announced first if it was held: its name, then its arguments whole."""
        if not self._announced:
            self._call_started(call.name, call.id or None)
            self._call_progress(compact_json(call.arguments))
        self._call_done(call)

    def _readable_before_closing_tag(self) -> tuple[int, int]:
        """For a <tool_call>: where `</tool_call>` is in the unread text (-1 if absent), and
        how much the reader may take: never the tag, nor what may be its start."""
        if not self._tagged:
            return -1, len(self.buf)
        close = _closing(TOOL_CALL_TAG)
        at = self.buf.find(close)
        return at, at if at >= 0 else len(self.buf) - held_prefix(self.buf, (close,))

    def _wanted(self, name: str) -> bool:
        known = self.options.known_names
        return self._tagged or known is None or is_known_tool(name, known)

    def _abandon_object(self, reader: CallObjectReader) -> None:
        """Not a call after all: what was read is text, and scanning goes on after its `{`."""
        self._call_dropped()
        self._text(self._opening + "{")
        self.buf = reader.scanner.raw[1:] + self.buf
        self._mode = "text"

    def _object_cut_off(self, reader: CallObjectReader) -> None:
        if self._tagged or self._announced or self._named_offered(reader):
            self._held_call_done(cut_off(reader.name, reader.scanner.raw))
        elif self._index == 0:
            self._call_dropped()
            self._text(self._opening + reader.scanner.raw)
        else:
            self._call_dropped()  # the last of a run of calls, cut off by the token limit
        self._mode = "text"

    def _open_function(self, index: int, marker: str) -> None:
        self.shape = marker + "...> tag"
        self._emit_text(index)
        self.buf = self.buf[len(marker) :]
        self._name = ""
        self._args = None
        self._tagged = True
        self._closers = [FUNCTION_END]
        self._mode = "function"

    def _in_function(self, final: bool) -> bool:
        if self._args is None:
            end_of_name = self.buf.find(">")
            if end_of_name < 0:
                if final:
                    self._function_cut_off()
                return False
            self._name = self.buf[:end_of_name].rstrip('"').strip()
            self.buf = self.buf[end_of_name + 1 :]
            self._args = JsonScanner()
            self._call_started(self._name)
        end = self._args.feed(self.buf)
        if self._args.invalid:
            # No JSON after the name: a broken call; what follows is read as text again,
            # without the whitespace after the call (however the chunks fell).
            error = f"after <function={self._name}> the arguments must follow as a JSON object"
            self._call_done(broken_call(self._name, error))
            self._mode = "after"
            return True
        self.buf = "" if end is None else self.buf[end:]
        self._call_progress(self._args)
        if end is None:
            if final:
                self._function_cut_off()
            return False
        self._call_done(call_from_arguments_text(self._name, self._args.raw, _FUNCTION_CALL))
        self._mode = "close"
        return True

    def _function_cut_off(self) -> None:
        raw = self._args.raw if self._args else self.buf
        self._call_done(cut_off(self._name, raw))
        self.buf = ""
        self._mode = "text"

    def _open_broken(self, index: int, body: int, fence: bool) -> None:
        self.shape = SHAPES[TOOL_CALL_TAG]
        self._emit_text(index)
        self.buf = self.buf[body:]
        self._closers = [FENCE] if fence else []
        self._scan_from = 0
        self._mode = "broken"

    def _in_broken(self, final: bool) -> bool:
        """A <tool_call> tag whose body is not JSON: the model meant a call, so it is one,
        with an error that shows it what it wrote."""
        close = _closing(TOOL_CALL_TAG)
        end = self.buf.find(close, self._scan_from)
        if end < 0 and not final:
            self._scan_from = max(0, len(self.buf) - len(close))
            return False
        body = self.buf if end < 0 else self.buf[:end]
        self.buf = "" if end < 0 else self.buf[end + len(close) :]
        self._call_done(not_a_call_object(None, body, json_ok=False))
        self._mode = "close"
        return True

    def _in_close(self, final: bool) -> bool:
        """After a call: its closing tag and fence, if written, and the whitespace around."""
        while True:
            stripped = self.buf.lstrip(WHITESPACE)
            if not stripped and not final:
                self.buf = ""
                return False
            self.buf = stripped
            if not self._closers:
                self._mode = "text"
                return True
            closer = self._closers[0]
            if self.buf.startswith(closer):
                self.buf = self.buf[len(closer) :]
            elif closer.startswith(self.buf) and not final:
                return False
            elif closer == FENCE and len(self._closers) == 1:
                self._fence_open = True  # another call may follow inside the same fence
            self._closers.pop(0)

    def _emit_text(self, end: int) -> None:
        self._text(self.buf[:end])
        self.buf = self.buf[end:]

    def _text(self, text: str) -> None:
        """Text, with the code blocks it opens and closes followed (a fence is a run of
        three or more backticks, however the chunks cut it)."""
        self._ticks, self._in_code = _fences(text, self._ticks, self._in_code)
        super()._text(text)


def _fences(text: str, ticks: int, in_code: bool) -> tuple[int, bool]:
    """After `text`: the backticks that end it and whether a code block is open, given
    those before it (`ticks`, `in_code`)."""
    for run in _BACKTICKS.finditer(text):
        before = ticks if run.start() == 0 else 0
        total = before + run.end() - run.start()
        if before < len(FENCE) <= total:
            in_code = not in_code
        ticks = total
    if text and not text.endswith("`"):
        ticks = 0
    return ticks, in_code


def _earliest(text: str, start: int, positions: dict[str, int]) -> tuple[int, str] | None:
    """The first marker at or after `start`. `positions` keeps each marker's last find (-1:
    absent) for this text, so text full of braces is not searched again for every marker."""
    best: tuple[int, str] | None = None
    for marker in MARKERS:
        index = positions.get(marker)
        if index is None or 0 <= index < start:
            index = positions[marker] = text.find(marker, start)
        if index >= 0 and (best is None or index < best[0]):
            best = (index, marker)
    return best


def _text_end(text: str, index: int, marker: str) -> int:
    """Text that is certain before an undecided marker: a bare call eats the whitespace
    before it, so that is held as well."""
    return len(text[:index].rstrip(WHITESPACE)) if marker == "{" else index


def _count_ws(text: str, start: int) -> int:
    n = start
    while n < len(text) and text[n] in WHITESPACE:
        n += 1
    return n - start
