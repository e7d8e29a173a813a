"""Tencent Hunyuan tool calls, in the two forms its models write inside `<tool_calls>`:

- Hunyuan-A13B-Instruct: a JSON array of call objects, as its chat template asks
  ("<tool_calls>[{"name": "func_name1", "arguments": {...}},...]</tool_calls>"; sources:
  vLLM's HunyuanA13BToolParser and its example template tool_chat_template_hunyuan_a13b);
- Hunyuan-7B-Instruct: one tag per call, the name on its line, the arguments fenced:

    <tool_calls><tool_call>NAME
    ```json
    {args}
    ```</tool_call>
    <tool_call>NAME
    ...</tool_call></tool_calls>

Reasoning is `<think>...</think>` (the non-thinking prompt ends with `<think>\\n\\n</think>\\n`);
a `<tool_calls>` written inside reasoning ends it (the calls are calls), and the `</think>`
the model may write after them is not text. The reply may come wrapped in `<answer>...
</answer>`, and A13B's template asks a reply without calls to start with "助手："
("Assistant:"): neither is part of its text. Inside `<tool_calls>` what is written is a
call whatever follows: arguments that cannot be read, or that the output ends inside of,
become a call with a parse error.
"""

from __future__ import annotations

from collections.abc import Collection

from farmhand.messages import ToolCall
from farmhand.parsing.base import ParserOptions
from farmhand.parsing.block_json import BlockJsonReading
from farmhand.parsing.broken import call_from_arguments_text, cut_off, unreadable
from farmhand.parsing.reader import CallObjectReader
from farmhand.parsing.scan import WHITESPACE, JsonScanner

CALLS_BEGIN = "<tool_calls>"
CALLS_END = "</tool_calls>"
CALL_BEGIN = "<tool_call>"
CALL_END = "</tool_call>"
ANSWER_TAGS = ("<answer>", "</answer>")
THINK_CLOSE = "</think>"
# What A13B's template tells the model to open a reply without calls with.
REPLY_PREFIX = "助手："
# The A13B array's punctuation around and between call objects.
ARRAY_PUNCTUATION = "[,]"
FENCE = "```"
# A name line longer than this is not one.
_HEAD_LIMIT = 256
_CALL_FORM = f"{CALL_BEGIN}NAME\\n{FENCE}json\\n{{...}}\\n{FENCE}{CALL_END}"


class HunyuanParser(BlockJsonReading):
    family = "hunyuan"
    assistant_start = ("<|extra_0|>",)
    think_interrupts = (CALLS_BEGIN,)

    def __init__(
        self, known_names: Collection[str] | None = None, *, options: ParserOptions | None = None
    ) -> None:
        super().__init__(known_names, options=options)
        # start | text | block | object | head | fence | args | broken | close | after
        self._mode = "start"
        self._name = ""
        self._args: JsonScanner | None = None
        self._reader = CallObjectReader()
        self._block_calls = 0  # calls reported since the block opened

    def _call_done(self, call: ToolCall) -> None:
        self._block_calls += 1
        super()._call_done(call)

    def _in_start(self, final: bool) -> bool:
        """At the reply's start: A13B's "助手：" is dropped."""
        rest = self.buf[self._at :]
        head = rest.lstrip(WHITESPACE)
        if head.startswith(REPLY_PREFIX):
            self._at += len(rest) - len(head) + len(REPLY_PREFIX)
        elif not final and REPLY_PREFIX.startswith(head):
            return False
        self._mode = "text"
        return True

    def _in_text(self, final: bool) -> bool:
        dropped = (*ANSWER_TAGS, THINK_CLOSE) if self._thinking is not None else ANSWER_TAGS
        marker = self._text_to_call((CALLS_BEGIN, *dropped), final)
        if marker is None:
            return False
        self._block_calls = 0
        self._mode = "block" if marker == CALLS_BEGIN else "after"
        return True

    def _in_block(self, final: bool) -> bool:
        """Between calls: A13B's array and its objects, 7B's next call, the block's end, or
        (none of them) text again; a block the output ends in before any call is one cut off."""
        if not self._skip_whitespace():
            if final and not self._block_calls:
                self._call_done(cut_off(None, CALLS_BEGIN))
            return False
        if self.buf[self._at] in ARRAY_PUNCTUATION:
            self._at += 1
            return True
        if self._starts("{"):
            self._reader = CallObjectReader()
            self._mode = "object"
            return True
        if final and (self._may_become(CALLS_END) or self._may_become(CALL_BEGIN)):
            # The output ended inside a tag: a call cut off, or the block's end; not text.
            if not self._block_calls:
                self._call_done(cut_off(None, CALLS_BEGIN + self.buf[self._at :]))
            self._at = len(self.buf)
            return False
        return self._between_calls(final, (CALL_BEGIN, "head"), (CALLS_END, "after"))

    def _in_object(self, final: bool) -> bool:
        """One of A13B's call objects."""
        read = self._block_json_call(self._reader, CALLS_END, final)
        if read == "wait":
            return False
        if read == "broken":
            self._name = self._reader.name or ""
            self._mode = "broken"
        else:
            self._mode = "block"
        return True

    def _in_head(self, final: bool) -> bool:
        """The name, up to its line's end (or the fence, or the arguments' brace)."""
        found = None
        for end in ("\n", FENCE, "{", CALL_END):
            at = self.buf.find(end, self._at, self._at + _HEAD_LIMIT)
            if at >= 0 and (found is None or at < found):
                found = at
        if found is None:
            rest = self.buf[self._at :]
            if len(rest) < _HEAD_LIMIT and not final:
                return False
            if len(rest) < _HEAD_LIMIT:  # the output ended inside the name
                self._call_done(cut_off(rest.strip() or None, CALL_BEGIN + rest))
                self._at = len(self.buf)
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
        if self._may_become(FENCE + "json"):
            if not final:
                return False
            self._call_done(cut_off(self._name, self.buf[self._at :]))  # ended in the fence
            self._at = len(self.buf)
            self._mode = "after"
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
            elif self._may_become(closer):
                if not final:
                    return False
                self._at = len(self.buf)  # the output ended inside it: not text
        return self._closed()

    def _closed(self) -> bool:
        self._mode = "block"
        return True
