"""Mistral tool calls, in the two forms its templates write.

- Mistral Nemo: `[TOOL_CALLS][{"name", "arguments", "id"}, ...]`, a JSON array after the
  marker, each object with the call's `id` (nine alphanumerics), which the tool's result must
  quote back, so it is kept as the call's id (see `call_array`, shared with Firefunction v2).
- Mistral Small 3.2, Ministral 3, Magistral, Devstral (tokenizer v11+): one marker per call,
  `[TOOL_CALLS]NAME[CALL_ID]ID[ARGS]{...}` (`[CALL_ID]ID` written by some), and reasoning
  in `[THINK]...[/THINK]`. The arguments' end is found by reading the JSON, so a marker
  inside a string argument does not end the call.
Text before a marker, and after the calls, is text.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import replace

from farmhand.parsing.base import CursorParser, ParserOptions
from farmhand.parsing.broken import call_from_arguments_text, cut_off, unreadable
from farmhand.parsing.call_array import CallArrayParser
from farmhand.parsing.scan import JsonScanner, feed_from, find_bounded

TOOL_CALLS = "[TOOL_CALLS]"
CALL_ID = "[CALL_ID]"
ARGS = "[ARGS]"
_HEAD_LIMIT = 256
_EXPECTED = f"{TOOL_CALLS}NAME{ARGS}{{...JSON arguments...}}"


class MistralNemoParser(CallArrayParser):
    family = "mistral_nemo"
    assistant_start = ("[/INST]",)
    markers = (TOOL_CALLS,)


class MagistralParser(CursorParser):
    family = "magistral"
    think_open = "[THINK]"
    think_close = "[/THINK]"
    assistant_start = ("[/INST]",)

    def __init__(
        self, known_names: Collection[str] | None = None, *, options: ParserOptions | None = None
    ) -> None:
        super().__init__(known_names, options=options)
        self._mode = "text"  # text | head | args | broken | after
        self._name = ""
        self._id = ""
        self._args = JsonScanner()

    def _in_text(self, final: bool) -> bool:
        if self._text_to_marker((TOOL_CALLS,), final) is None:
            return False
        self._name = self._id = ""
        self._mode = "head"
        return True

    def _in_head(self, final: bool) -> bool:
        """`NAME[ARGS]`, or `NAME[CALL_ID]ID[ARGS]`."""
        found = find_bounded(self.buf, (ARGS, CALL_ID), self._at, self._at + _HEAD_LIMIT)
        if found is None:
            if not final and len(self.buf) - self._at < _HEAD_LIMIT:
                return False
            head = self.buf[self._at : self._at + _HEAD_LIMIT]
            self._call_done(unreadable(self._name or None, TOOL_CALLS + head, _EXPECTED))
            self._at += len(head)
            self._mode = "text"
            return True
        index, marker = found
        piece = self.buf[self._at : index].strip()
        self._at = index + len(marker)
        if self._name:
            self._id = piece  # the text between [CALL_ID] and [ARGS]
        else:
            self._name = piece
        if marker == ARGS:
            self._call_started(self._name, self._id or None)
            self._args = JsonScanner()
            self._mode = "args"
        return True

    def _in_broken(self, final: bool) -> bool:
        """Arguments that are not JSON: a call with an error, up to the next call."""
        body = self._read_to_stop((TOOL_CALLS,), final)
        if body is None:
            return False
        self._call_done(unreadable(self._name, self._name + ARGS + body, _EXPECTED))
        self._mode = "text"
        return True

    def _in_args(self, final: bool) -> bool:
        args = self._args
        end = feed_from(args, self.buf, self._at)
        if args.invalid:
            self._mode = "broken"
            return True
        self._at = len(self.buf) if end is None else end
        self._call_progress(args)
        if end is None:
            if final:
                self._call_done(cut_off(self._name, self._name + ARGS + args.raw))
                self._mode = "after"
            return False
        call = call_from_arguments_text(self._name, args.raw, _EXPECTED)
        if self._id and not call.parse_error:
            call = replace(call, id=self._id)
        self._call_done(call)
        self._mode = "after"
        return True
