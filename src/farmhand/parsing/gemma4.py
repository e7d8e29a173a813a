"""Gemma 4 tool calls: `<|tool_call>call:NAME{key:<|"|>text<|"|>,n:3}<tool_call|>`.

The arguments are Gemma's own object notation (see `gemma_args`). Reasoning is a channel,
`<|channel>thought\\n...<channel|>`, at the start of the reply; a channel block later in the
reply is reasoning too, and the stray channel tokens a model leaves around an empty one
(`<channel|>` alone) are dropped. `<|tool_response>` and `<turn|>` end the turn and are not
text. With reasoning not split out (reasoning_format none), channels stay in the text.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import ClassVar

from farmhand.messages import ReasoningDelta, ToolCall
from farmhand.parsing.base import CursorParser, ParserOptions
from farmhand.parsing.broken import cut_off, unreadable
from farmhand.parsing.gemma_args import QUOTE, GemmaArguments
from farmhand.parsing.typed_values import parameter_types

TOOL_CALL = "<|tool_call>"
TOOL_CALL_END = "<tool_call|>"
CHANNEL = "<|channel>"
CHANNEL_END = "<channel|>"
THOUGHT = "thought"
TURN_ENDS = ("<|tool_response>", "<turn|>")
_CALL_PREFIX = "call:"
_HEAD_LIMIT = 256


class Gemma4Parser(CursorParser):
    family = "gemma4"
    think_open = CHANNEL + THOUGHT
    think_close = CHANNEL_END
    assistant_start = ("<|turn>model\n",)
    call_start: ClassVar[str] = TOOL_CALL
    call_end: ClassVar[str] = TOOL_CALL_END
    quote: ClassVar[str] = QUOTE
    turn_ends: ClassVar[tuple[str, ...]] = TURN_ENDS
    # The reasoning channel's tokens, when the family has one.
    channel: ClassVar[tuple[str, str] | None] = (CHANNEL, CHANNEL_END)

    def __init__(
        self, known_names: Collection[str] | None = None, *, options: ParserOptions | None = None
    ) -> None:
        super().__init__(known_names, options=options)
        self._mode = "text"  # text | head | args | close | broken | channel | after
        self._markers: tuple[str, ...] = (self.call_start, *self.turn_ends)
        if self._thinking is not None and self.channel is not None:
            self._markers += self.channel
        self._name = ""
        self._args = GemmaArguments(self.quote)

    def _in_text(self, final: bool) -> bool:
        marker = self._text_to_marker(self._markers, final)
        if marker == self.call_start:
            self._name = ""
            self._mode = "head"
        elif marker == CHANNEL:
            self._mode = "channel"
        return marker is not None

    def _in_head(self, final: bool) -> bool:
        """`call:NAME` up to the arguments' `{`."""
        brace = self.buf.find("{", self._at, self._at + _HEAD_LIMIT)
        end = self.buf.find(self.call_end, self._at, self._at + _HEAD_LIMIT)
        if brace < 0 or 0 <= end < brace:
            if end < 0 and not final and len(self.buf) - self._at < _HEAD_LIMIT:
                return False
            self._mode = "broken"
            return True
        self._name = self.buf[self._at : brace].strip().removeprefix(_CALL_PREFIX).strip()
        self._at = brace
        name = self._name
        schemas = self.options.tool_schemas
        self._args = GemmaArguments(self.quote, lambda key: parameter_types(schemas, name, key))
        self._call_started(self._name)
        self._mode = "args"
        return True

    def _in_args(self, final: bool) -> bool:
        args = self._args
        self._at = args.feed(self.buf, self._at, final)
        if args.invalid:
            self._mode = "broken"
            return True
        self._call_progress(args.arguments)
        if not args.done:
            if final:
                self._call_done(cut_off(self._name, f"call:{self._name}{args.written.text}"))
                self._mode = "after"
            return False
        value, _ = args.value()
        written = f"call:{self._name}{args.written.text}"
        call = (
            ToolCall(self._name, value) if value is not None else self._broken(self._name, written)
        )
        self._call_done(call)
        self._mode = "close"
        return True

    def _in_close(self, final: bool) -> bool:
        if not self._step_over(self.call_end, final):
            return False
        self._mode = "after"
        return True

    def _in_broken(self, final: bool) -> bool:
        """A call that cannot be read: one call with an error, up to `<tool_call|>`."""
        body = self._read_to_stop((self.call_end,), final)
        if body is None:
            return False
        written = f"call:{self._name}{self._args.written.text}" if self._name else ""
        self._call_done(self._broken(self._name, written + body))
        self._mode = "close"
        return True

    def _in_channel(self, final: bool) -> bool:
        """A channel block after the start of the reply: reasoning (empty ones vanish)."""
        body = self._read_to_stop((CHANNEL_END,), final)
        if body is None:
            return False
        if self._starts(CHANNEL_END):
            self._at += len(CHANNEL_END)
        reasoning = body.replace(CHANNEL, "").strip().removeprefix(THOUGHT).strip()
        if reasoning and self.options.reasoning_in_content:
            self._text(f"<think>{reasoning}</think>")
        elif reasoning:
            self._add(ReasoningDelta(reasoning))
        self._mode = "text"
        return True

    def _broken(self, name: str, written: str) -> ToolCall:
        q = self.quote
        expected = f"{self.call_start}{_CALL_PREFIX}NAME{{key:{q}value{q}}}{self.call_end}"
        return unreadable(name or None, written, expected)
