"""Mistral tool calls, in the forms its tokenizer versions write (sources: Mistral's
templates, mistral-common's tokenizers, vLLM's MistralToolParser and its tests).

- Before tokenizer v11 (Mistral 7B Instruct v0.3, Mixtral 8x22B, Mistral Nemo):
  `[TOOL_CALLS] [{"name", "arguments"}, ...]`, a JSON array after the marker; Nemo's
  objects carry the call's `id` (nine alphanumerics), which the tool's result must quote
  back, so it is kept as the call's id (see `call_array`, shared with Firefunction v2).
- Tokenizer v11 (Mistral Small 3.1): one marker per call, `[TOOL_CALLS]NAME{...}`; v13+
  (Mistral Small 3.2, Ministral 3, Magistral, Devstral) writes `[TOOL_CALLS]NAME[ARGS]{...}`,
  some with `[CALL_ID]ID` before `[ARGS]`, and reasoning in `[THINK]...[/THINK]`. The
  arguments' end is found by reading the JSON, so a marker inside a string argument does
  not end the call. `mistral_nemo` reads these too when a name follows its marker.
Text before a marker, and after the calls, is text. A model that writes its calls inside a
reasoning block it never closed ends the reasoning with its marker.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import replace

from farmhand.parsing.base import CursorParser, ParserOptions
from farmhand.parsing.broken import call_from_arguments_text, cut_off, unreadable
from farmhand.parsing.call_array import CallArrayParser
from farmhand.parsing.scan import WHITESPACE, JsonScanner, feed_from, find_bounded

TOOL_CALLS = "[TOOL_CALLS]"
CALL_ID = "[CALL_ID]"
ARGS = "[ARGS]"
_HEAD_LIMIT = 256
_EXPECTED = f"{TOOL_CALLS}NAME{ARGS}{{...JSON arguments...}}"


class MistralNemoParser(CallArrayParser):
    family = "mistral_nemo"
    assistant_start = ("[/INST]",)
    markers = (TOOL_CALLS,)
    think_interrupts = (TOOL_CALLS,)

    def __init__(
        self, known_names: Collection[str] | None = None, *, options: ParserOptions | None = None
    ) -> None:
        super().__init__(known_names, options=options)
        self._named: MagistralParser | None = None  # reads v11's named calls, once met

    def _in_open(self, final: bool) -> bool:
        """After the marker: the array (or a lone object), or v11's `NAME{...}`, read by
        Magistral's reader from here to the reply's end."""
        head = self.buf.lstrip(WHITESPACE)
        if not head or head[0] in "[{":
            return super()._in_open(final)
        inner = replace(self.options, reasoning_format="none", thinking_forced_open=False)
        self._named = MagistralParser(options=inner)
        self.buf = TOOL_CALLS + head
        self._mode = "named"
        return True

    def _in_named(self, final: bool) -> bool:
        assert self._named is not None
        self._events += self._named.feed(self.buf)
        self.buf = ""
        if final:
            self._events += self._named.finish()
        return False


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
        found = find_bounded(self.buf, (ARGS, CALL_ID, "{"), self._at, self._at + _HEAD_LIMIT)
        if found is None:
            rest = self.buf[self._at :]
            if len(rest) < _HEAD_LIMIT and not final:
                return False
            if len(rest) < _HEAD_LIMIT:  # the output ended inside the head
                self._call_done(cut_off(self._name or rest.strip() or None, TOOL_CALLS + rest))
                self._at = len(self.buf)
                self._mode = "after"
                return False
            head = self.buf[self._at : self._at + _HEAD_LIMIT]
            self._call_done(unreadable(self._name or None, TOOL_CALLS + head, _EXPECTED))
            self._at += len(head)
            self._mode = "text"
            return True
        index, marker = found
        piece = self.buf[self._at : index].strip()
        self._at = index + len(marker) if marker != "{" else index  # v11: NAME{...}
        if self._name:
            self._id = piece  # the text between [CALL_ID] and [ARGS]
        else:
            self._name = piece
        if marker != CALL_ID:
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
