"""Kimi K2 (Instruct and Thinking) tool calls, in special tokens:

    <|tool_calls_section_begin|>
    <|tool_call_begin|>functions.NAME:0<|tool_call_argument_begin|>{args}<|tool_call_end|>
    ...
    <|tool_calls_section_end|>

The call's id is its head (`functions.NAME:0`), which the tool's result quotes back. K2
Thinking may start its calls inside an unclosed `<think>` (the calls end the reasoning), and
may leave out the section tokens or a call's end token: a call ends at the next call's token
too, and its arguments are complete when their JSON object is.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import replace

from farmhand.parsing.base import CursorParser, ParserOptions
from farmhand.parsing.broken import call_from_arguments_text, cut_off, unreadable
from farmhand.parsing.scan import JsonScanner

SECTION_BEGIN = "<|tool_calls_section_begin|>"
SECTION_END = "<|tool_calls_section_end|>"
CALL_BEGIN = "<|tool_call_begin|>"
ARGUMENTS_BEGIN = "<|tool_call_argument_begin|>"
CALL_END = "<|tool_call_end|>"
# Where a call's arguments end for sure: JSON never holds these tokens.
STOPS = (CALL_END, CALL_BEGIN, SECTION_END)
# A head longer than this is not one.
_HEAD_LIMIT = 256
_HEAD = re.compile(r"\s*(?:functions\.)?(?P<name>.+?)(?::\d+)?\s*$", re.DOTALL)
_CALL_FORM = f"{CALL_BEGIN}functions.NAME:0{ARGUMENTS_BEGIN}{{...}}{CALL_END}"


class KimiK2Parser(CursorParser):
    family = "kimi_k2"
    assistant_start = ("<|im_assistant|>assistant<|im_middle|>",)
    think_interrupts = (SECTION_BEGIN, CALL_BEGIN)

    def __init__(
        self, known_names: Collection[str] | None = None, *, options: ParserOptions | None = None
    ) -> None:
        super().__init__(known_names, options=options)
        self._mode = "text"  # text | section | head | args | broken | close | after
        self._name = ""
        self._id = ""
        self._args: JsonScanner | None = None

    def _in_text(self, final: bool) -> bool:
        marker = self._text_to_call((SECTION_BEGIN, CALL_BEGIN), final)
        if marker is None:
            return False
        self._mode = "head" if marker == CALL_BEGIN else "section"
        return True

    def _in_section(self, final: bool) -> bool:
        """Between calls: the next call, the section's end, or (neither) text again."""
        return self._between_calls(final, (CALL_BEGIN, "head"), (SECTION_END, "after"))

    def _in_head(self, final: bool) -> bool:
        """`functions.NAME:0`, up to the arguments' token."""
        end = self.buf.find(ARGUMENTS_BEGIN, self._at, self._at + _HEAD_LIMIT)
        if end < 0:
            if not final and len(self.buf) - self._at < _HEAD_LIMIT:
                return False
            self._name = self._id = ""
            self._mode = "broken"
            return True
        head = self.buf[self._at : end]
        self._at = end + len(ARGUMENTS_BEGIN)
        match = _HEAD.match(head)
        self._id = head.strip()
        self._name = match.group("name").strip() if match else ""
        if not self._name:
            self._mode = "broken"
            return True
        self._call_started(self._name, self._id)
        self._args = JsonScanner()
        self._mode = "args"
        return True

    def _in_args(self, final: bool) -> bool:
        args = self._args
        assert args is not None
        read = self._json_arguments(args, STOPS, final)
        if read == "wait":
            return False
        if read == "broken":
            self._mode = "broken"
            return True
        if read == "cut":
            self._call_done(cut_off(self._name, args.raw))
        else:
            call = call_from_arguments_text(self._name, args.raw, _CALL_FORM)
            self._call_done(replace(call, id=self._id))
        self._mode = "close"
        return True

    def _in_broken(self, final: bool) -> bool:
        """A call whose head or arguments cannot be read: it lasts to its end token."""
        body = self._read_to_stop(STOPS, final)
        if body is None:
            return False
        call = unreadable(self._name or None, body, _CALL_FORM)
        self._call_done(replace(call, id=self._id) if self._id else call)
        self._mode = "close"
        return True

    def _in_close(self, final: bool) -> bool:
        """After a call's arguments: its end token, if written."""
        if not self._skip_whitespace():
            if final:
                self._mode = "section"
            return False
        if self._starts(CALL_END):
            self._at += len(CALL_END)
        elif self._may_become(CALL_END) and not final:
            return False
        self._mode = "section"
        return True
