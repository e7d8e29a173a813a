"""Tencent Hunyuan (7B / A13B Instruct) tool calls, as its chat template writes them:

    <tool_calls><tool_call>NAME
    ```json
    {args}
    ```</tool_call>
    <tool_call>NAME
    ...</tool_call></tool_calls>

Reasoning is `<think>...</think>` (the non-thinking prompt ends with `<think>\\n\\n</think>\\n`),
and the reply may come wrapped in `<answer>...</answer>`, tags that are not part of its text.
Inside `<tool_calls>` the tags are a call whatever follows: arguments that cannot be read
become a call with a parse error.
"""

from __future__ import annotations

from collections.abc import Collection

from farmhand.parsing.base import CursorParser, ParserOptions
from farmhand.parsing.broken import call_from_arguments_text, cut_off, unreadable
from farmhand.parsing.scan import JsonScanner

CALLS_BEGIN = "<tool_calls>"
CALLS_END = "</tool_calls>"
CALL_BEGIN = "<tool_call>"
CALL_END = "</tool_call>"
ANSWER_TAGS = ("<answer>", "</answer>")
FENCE = "```"
# A name line longer than this is not one.
_HEAD_LIMIT = 256
_CALL_FORM = f"{CALL_BEGIN}NAME\\n{FENCE}json\\n{{...}}\\n{FENCE}{CALL_END}"


class HunyuanParser(CursorParser):
    family = "hunyuan"
    assistant_start = ("<|extra_0|>",)

    def __init__(
        self, known_names: Collection[str] | None = None, *, options: ParserOptions | None = None
    ) -> None:
        super().__init__(known_names, options=options)
        self._mode = "text"  # text | block | head | args | broken | close | after
        self._name = ""
        self._args: JsonScanner | None = None

    def _in_text(self, final: bool) -> bool:
        marker = self._text_to_call((CALLS_BEGIN, *ANSWER_TAGS), final)
        if marker is None:
            return False
        self._mode = "block" if marker == CALLS_BEGIN else "after"
        return True

    def _in_block(self, final: bool) -> bool:
        """Between calls: the next call, the block's end, or (neither) text again."""
        return self._between_calls(final, (CALL_BEGIN, "head"), (CALLS_END, "after"))

    def _in_head(self, final: bool) -> bool:
        """The name, up to its line's end (or the fence, or the arguments' brace)."""
        found = None
        for end in ("\n", FENCE, "{", CALL_END):
            at = self.buf.find(end, self._at, self._at + _HEAD_LIMIT)
            if at >= 0 and (found is None or at < found):
                found = at
        if found is None:
            if not final and len(self.buf) - self._at < _HEAD_LIMIT:
                return False
            self._name = ""
            self._mode = "broken"
            return True
        self._name = self.buf[self._at : found].strip()
        self._at = found
        if not self._name:
            self._mode = "broken"
            return True
        self._call_started(self._name)
        self._mode = "fence"
        return True

    def _in_fence(self, final: bool) -> bool:
        """The ```json line that opens the arguments, if written."""
        if not self._skip_whitespace():
            if final:
                self._call_done(cut_off(self._name, ""))
                self._mode = "after"
            return False
        if not final and self._may_become(FENCE + "json"):
            return False
        if self._starts(FENCE + "json"):
            self._at += len(FENCE + "json")
        elif self._starts(FENCE):
            self._at += len(FENCE)
        self._args = JsonScanner()
        self._mode = "args"
        return True

    def _in_args(self, final: bool) -> bool:
        args = self._args
        assert args is not None
        read = self._json_arguments(args, (CALL_END, CALLS_END), final)
        if read == "wait":
            return False
        if read == "broken":
            self._mode = "broken"
            return True
        if read == "cut":
            self._call_done(cut_off(self._name, args.raw))
        else:
            self._call_done(call_from_arguments_text(self._name, args.raw, _CALL_FORM))
        self._mode = "close"
        return True

    def _in_broken(self, final: bool) -> bool:
        """A call whose name or arguments cannot be read: it lasts to its end tag."""
        body = self._read_to_stop((CALL_END, CALLS_END), final)
        if body is None:
            return False
        self._call_done(unreadable(self._name or None, body, _CALL_FORM))
        self._mode = "close"
        return True

    def _in_close(self, final: bool) -> bool:
        """After a call's arguments: the closing fence and `</tool_call>`, if written."""
        for closer in (FENCE, CALL_END):
            if not self._skip_whitespace():
                return final and self._closed()
            if self._starts(closer):
                self._at += len(closer)
            elif self._may_become(closer) and not final:
                return False
        return self._closed()

    def _closed(self) -> bool:
        self._mode = "block"
        return True
