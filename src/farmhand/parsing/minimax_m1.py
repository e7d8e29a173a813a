"""MiniMax M1 tool calls: call objects, one a line, in a `<tool_calls>` block.

    <tool_calls>
    {"name": "NAME", "arguments": {...}}
    {"name": "OTHER", "arguments": {...}}
    </tool_calls>

Source: vLLM's MinimaxToolParser and MiniMax-M1's chat template. Reasoning is
`<think>...</think>` (a block written inside reasoning is reasoning, as vLLM drops it).
Inside the block the objects are calls whatever they hold: one that cannot be read, or that
the output ends inside of, is a call with a parse error. (MiniMax M2 writes XML invokes: the
`minimax_m2` family.)
"""

from __future__ import annotations

from collections.abc import Collection

from farmhand.parsing.base import ParserOptions
from farmhand.parsing.block_json import BlockJsonReading
from farmhand.parsing.broken import CALL_OBJECT, cut_off, unreadable
from farmhand.parsing.reader import CallObjectReader

BLOCK_OPEN = "<tool_calls>"
BLOCK_CLOSE = "</tool_calls>"
_EXPECTED = f"{BLOCK_OPEN} and one {CALL_OBJECT} a line"


class MiniMaxM1Parser(BlockJsonReading):
    family = "minimax_m1"
    assistant_start = ("<beginning_of_sentence>ai name=MiniMax AI\n",)

    def __init__(
        self, known_names: Collection[str] | None = None, *, options: ParserOptions | None = None
    ) -> None:
        super().__init__(known_names, options=options)
        self._mode = "text"  # text | block | object | broken | after
        self._reader = CallObjectReader()
        self._block_calls = 0

    def _in_text(self, final: bool) -> bool:
        if self._text_to_call((BLOCK_OPEN,), final) is None:
            return False
        self._block_calls = 0
        self._mode = "block"
        return True

    def _in_block(self, final: bool) -> bool:
        """Between objects: the next one, the block's end, or (after a call) text again."""
        if not self._skip_whitespace():
            if final and not self._block_calls:
                self._call_done(cut_off(None, BLOCK_OPEN))
            return False
        if self._starts("{"):
            self._reader = CallObjectReader()
            self._mode = "object"
        elif self._starts(BLOCK_CLOSE):
            self._at += len(BLOCK_CLOSE)
            self._mode = "after" if self._block_calls else "broken_empty"
        elif self._may_become(BLOCK_CLOSE) and not final:
            return False
        elif self._may_become(BLOCK_CLOSE) and self._block_calls:
            self._at = len(self.buf)  # the output ended inside the closing tag: not text
            return False
        else:
            self._mode = "broken" if not self._block_calls else "text"
        return True

    def _in_broken_empty(self, final: bool) -> bool:
        """A block that held nothing: the model meant a call it did not write."""
        self._call_done(unreadable(None, BLOCK_OPEN + BLOCK_CLOSE, _EXPECTED))
        self._mode = "after"
        return True

    def _in_object(self, final: bool) -> bool:
        read = self._block_json_call(self._reader, BLOCK_CLOSE, final)
        if read == "wait":
            return False
        if read == "done":
            self._block_calls += 1
        self._mode = "block" if read == "done" else "broken"
        return True

    def _in_broken(self, final: bool) -> bool:
        """What in a block is no call object: one call with an error, to the block's end."""
        body = self._read_to_stop((BLOCK_CLOSE,), final)
        if body is None:
            return False
        if self._starts(BLOCK_CLOSE):
            self._at += len(BLOCK_CLOSE)
        name = self._reader.name if self._announced else None
        self._call_done(unreadable(name, body, _EXPECTED))
        self._block_calls += 1
        self._mode = "after"
        return True
