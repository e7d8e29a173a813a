"""DeepSeek R1 tool calls (and its distills): `<think>` reasoning, then

    <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME
    ```json
    {args}
    ```<｜tool▁call▁end｜>...<｜tool▁calls▁end｜>

The block opener has variants models write (`<｜tool▁calls｜>`, and the spellings llama.cpp
accepts with `_` or spaces for `▁`), the fence may lack its newlines, and a call may lack
`<｜tool▁call▁begin｜>` or `function`; DeepSeek V3.1 writes `NAME<｜tool▁sep｜>{args}`
(no `function`, no fence), read by the same parser. Text before the block is kept as
written; whitespace after the block is dropped and the rest is text again.

Inside a block the tokens are a call whatever follows: arguments that cannot be read become a
call with a parse error, so the model is told.
"""

from __future__ import annotations

from collections.abc import Collection

from farmhand.messages import ToolCall
from farmhand.parsing.base import CursorParser, ParserOptions, call_from_object
from farmhand.parsing.broken import cut_off, unreadable
from farmhand.parsing.scan import JsonScanner, find_bounded, loads

CALLS_BEGIN = (
    "<｜tool▁calls▁begin｜>",
    "<｜tool_calls_begin｜>",
    "<｜tool calls begin｜>",
    "<｜tool\\_calls\\_begin｜>",
    "<｜tool▁calls｜>",
)
CALLS_END = "<｜tool▁calls▁end｜>"
CALL_BEGIN = "<｜tool▁call▁begin｜>"
CALL_END = "<｜tool▁call▁end｜>"
SEP = "<｜tool▁sep｜>"
FUNCTION_SEP = "function" + SEP
FENCE = "```"
OPENERS = (*CALLS_BEGIN, CALL_BEGIN)
CLOSERS = (FENCE, CALL_END)
# Where a call's body ends for sure: JSON never holds these tokens.
STOPS = (CALL_END, CALLS_END)
# What ends the head line `function<｜tool▁sep｜>NAME`.
HEAD_ENDS = ("\n", FENCE, "{", *STOPS)
# A head longer than this is not a name: the call is broken.
HEAD_LIMIT = 256
_WRITE_IT_WHOLE = f"write the whole JSON object, then {FENCE}{CALL_END}"
_CALL_FORM = (
    f"function{SEP}NAME, then the arguments as a JSON object in {FENCE}json\\n{{...}}\\n{FENCE}"
)


class DeepSeekR1Parser(CursorParser):
    family = "deepseek_r1"
    assistant_start = ("<｜Assistant｜>",)

    def __init__(
        self, known_names: Collection[str] | None = None, *, options: ParserOptions | None = None
    ) -> None:
        super().__init__(known_names, options=options)
        self._mode = "text"  # text | block | head | fence | args | broken | close | after
        self._name = ""  # of the call being read
        self._args: JsonScanner | None = None
        self._scan_from = 0  # how far past the cursor the search for a head's end looked
        self._closer = 0  # which of CLOSERS is looked for next

    def _in_text(self, final: bool) -> bool:
        marker = self._text_to_marker(OPENERS, final)
        if marker is None:
            return False
        self._mode = "head" if marker == CALL_BEGIN else "block"
        return True

    def _in_block(self, final: bool) -> bool:
        """Between calls inside a block: the next call, the block's end, or neither."""
        if not self._skip_whitespace():
            return False
        for token, mode in ((CALL_BEGIN, "head"), (CALL_END, "block"), (CALLS_END, "after")):
            if self._starts(token):
                self._at += len(token)
                self._mode = mode
                return True
        if self._starts(FUNCTION_SEP) or self._starts(SEP):
            self._mode = "head"
            return True
        expected = (CALL_BEGIN, CALL_END, CALLS_END, FUNCTION_SEP, SEP)
        if not final and any(self._may_become(t) for t in expected):
            return False
        self._mode = "text"  # the block ended without its closing token
        return True

    def _in_head(self, final: bool) -> bool:
        """`function<｜tool▁sep｜>NAME` up to the end of its line."""
        start = self._at
        found = find_bounded(self.buf, HEAD_ENDS, start + self._scan_from, start + HEAD_LIMIT + 1)
        if found is None:
            possible = self._certain(HEAD_ENDS, final=False)
            if not final and possible - start <= HEAD_LIMIT:
                self._scan_from = possible - start
                return False
            self._name = ""
            self._open_broken()  # no name line: the call cannot be read
            return True
        index, marker = found
        self._scan_from = 0
        line = self.buf[start:index]
        if SEP in line:
            before, _, line = line.rpartition(SEP)
            if not line.strip() and before.strip() not in ("", "function"):
                line = before  # V3.1 writes the name first: NAME<｜tool▁sep｜>{args}
        self._name = line.strip()
        if not self._name:
            self._open_broken()
            return True
        self._at = index + 1 if marker == "\n" else index
        self._call_started(self._name)
        if marker in STOPS:  # no arguments written: a call that takes none
            self._call_done(ToolCall(self._name, {}))
            self._mode = "close"
        else:
            self._mode = "fence"
        return True

    def _in_fence(self, final: bool) -> bool:
        """The ```json line that opens the arguments, if written."""
        if not self._skip_whitespace() and not final:
            return False  # (at the end, the arguments' reader says the call was cut off)
        if self._starts(FENCE):
            word = self._at + len(FENCE)
            limit = min(len(self.buf), self._at + HEAD_LIMIT)
            while word < limit and self.buf[word].isalpha():
                word += 1
            if word == len(self.buf) and word - self._at < HEAD_LIMIT and not final:
                return False  # the language word may go on
            self._at = word
        elif self._may_become(FENCE) and not final:
            return False
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
            self._open_broken()
            return True
        if read == "cut":  # the call ended (or the output did) inside the JSON
            self._call_done(cut_off(self._name, args.raw, _WRITE_IT_WHOLE))
        else:
            value, ok = loads(args.raw)
            call = call_from_object({"name": self._name, "arguments": value}) if ok else None
            self._call_done(call or _not_json(self._name, args.raw))
        self._mode = "close"
        return True

    def _open_broken(self) -> None:
        self._scan_from = 0
        self._mode = "broken"

    def _in_broken(self, final: bool) -> bool:
        """A call whose name or arguments cannot be read: it lasts to its closing token."""
        body = self._read_to_stop(STOPS, final)
        if body is None:
            return False
        call = _not_json(self._name, body)
        self._call_started(call.name)
        self._call_done(call)
        self._mode = "close"
        return True

    def _in_close(self, final: bool) -> bool:
        """After a call's arguments: the closing fence and `<｜tool▁call▁end｜>`, if written."""
        while self._closer < len(CLOSERS):
            if not self._skip_whitespace() and not final:
                return False
            closer = CLOSERS[self._closer]
            if self._starts(closer):
                self._at += len(closer)
            elif self._may_become(closer) and not final:
                return False
            self._closer += 1
        self._closer = 0
        self._mode = "block"
        return True


def _not_json(name: str, body: str) -> ToolCall:
    return unreadable(name, body.strip().removesuffix(FENCE), _CALL_FORM)


class DeepSeekV31Parser(DeepSeekR1Parser):
    """DeepSeek V3.1: R1's tokens with the name first and the arguments bare,
    `<｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{args}<｜tool▁call▁end｜>` (R1's form is read too)."""

    family = "deepseek_v3_1"
