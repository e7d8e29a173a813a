"""gpt-oss's Harmony format: a turn is a run of messages, each with a header and a channel.

  <|channel|>analysis<|message|>REASONING<|end|>
  <|start|>assistant<|channel|>commentary to=functions.NAME <|constrain|>json<|message|>{}<|call|>
  <|start|>assistant<|channel|>final<|message|>REPLY

The first message's `<|start|>assistant` is the prompt's. A header may put the recipient
(`to=functions.NAME`) before or after the channel. A message to `functions.NAME` is a call
whatever its channel, its body the arguments as JSON; a message to another recipient (the
built-in browser / python / container tools) is not one of the turn's tools and is dropped;
`analysis` is reasoning, and every other message is the reply.

Reasoning left in the reply (reasoning_format none, or reasoning_in_content) is the analysis
message as written, header and `<|end|>` included, as llama.cpp gives it.
"""

from __future__ import annotations

import re
from collections.abc import Collection

from farmhand.messages import ReasoningDelta
from farmhand.parsing.base import CursorParser, ParserOptions
from farmhand.parsing.broken import call_from_arguments_text, cut_off, unreadable
from farmhand.parsing.scan import JsonScanner, feed_until

START = "<|start|>"
CHANNEL = "<|channel|>"
MESSAGE = "<|message|>"
ENDS = ("<|end|>", "<|call|>", "<|return|>")
BODY_STOPS = (*ENDS, START)
ASSISTANT = "assistant"
FUNCTIONS = "functions."
# A header longer than this is not one.
_HEADER_LIMIT = 512
_RECIPIENT = re.compile(r"to=([^\s<]+)")
_CHANNEL = re.compile(re.escape(CHANNEL) + r"\s*(\w+)")
_HEADER_STARTS = (CHANNEL, "to=", "<|constrain|>")
_CALL_FORM = f"{CHANNEL}commentary to=functions.NAME{MESSAGE}{{...}}<|call|>"


class HarmonyParser(CursorParser):
    family = "gpt_oss"
    assistant_start = (START + ASSISTANT,)

    def __init__(
        self, known_names: Collection[str] | None = None, *, options: ParserOptions | None = None
    ) -> None:
        super().__init__(known_names, options=options)
        self._thinking = None  # reasoning is a channel here, not a tag
        self._split_reasoning = (
            self.options.reasoning_format != "none" and not self.options.reasoning_in_content
        )
        self._mode = "start"  # start | role | header | text | reasoning | call | skip
        self._header = ""
        self._name = ""
        self._args: JsonScanner | None = None

    @classmethod
    def prefill_of(cls, prompt: str) -> str:
        """The turn may already hold messages (an analysis the prompt wrote): the reply starts
        after the first `<|start|>assistant` of the run of assistant messages the prompt
        ends with."""
        parts = prompt.split(START)
        first = len(parts)
        while first > 1 and parts[first - 1].startswith(ASSISTANT):
            first -= 1
        if first == len(parts):
            return ""
        return START.join(parts[first:])[len(ASSISTANT) :]

    def _route(self, chunk: str, final: bool) -> None:
        # Every message is read, tool calls or not: their headers are never text.
        self.buf += chunk
        self._advance(final)

    def _in_start(self, final: bool) -> bool:
        """Where a message starts: `<|start|>`, a header, or (no header) reply text."""
        if not self._skip_whitespace():
            return False
        if self._starts(START):
            self._at += len(START)
            self._mode = "role"
        elif any(self._starts(s) for s in _HEADER_STARTS):
            self._mode = "header"
        elif not final and any(self._may_become(s) for s in (START, *_HEADER_STARTS)):
            return False
        else:
            self._mode = "text"
        return True

    def _in_role(self, final: bool) -> bool:
        if self._starts(ASSISTANT):
            self._at += len(ASSISTANT)
        elif self._may_become(ASSISTANT) and not final:
            return False
        self._mode = "header"
        return True

    def _in_header(self, final: bool) -> bool:
        end = self.buf.find(MESSAGE, self._at, self._at + _HEADER_LIMIT + len(MESSAGE))
        if end < 0:
            if not final and len(self.buf) - self._at < _HEADER_LIMIT + len(MESSAGE):
                return False
            self._mode = "text"  # not a header after all
            return True
        header = self.buf[self._at : end]
        self._header = self.buf[self._at : end + len(MESSAGE)]
        self._at = end + len(MESSAGE)
        recipient = _RECIPIENT.search(header)
        to = recipient.group(1) if recipient else ASSISTANT
        channels = _CHANNEL.findall(header)
        if to.startswith(FUNCTIONS) and self.options.parse_tool_calls:
            self._open_call(to[len(FUNCTIONS) :])
        elif to != ASSISTANT:
            self._mode = "skip"  # a built-in tool's message, or a call not to be read
        elif channels and channels[-1] == "analysis":
            if not self._split_reasoning:
                self._text(self._header)
            self._mode = "reasoning"
        else:
            self._mode = "text"
        return True

    def _body(self, final: bool) -> tuple[str, str | None]:
        """The body text that is certain, and the stop token that ended it (None: not yet)."""
        start = self._at
        stop = self._text_stop(final)
        return self.buf[start : self._at], stop

    def _text_stop(self, final: bool) -> str | None:
        found = None
        for stop in BODY_STOPS:
            at = self.buf.find(stop, self._at)
            if at >= 0 and (found is None or at < found[0]):
                found = (at, stop)
        if found is None:
            self._at = self._certain(BODY_STOPS, final)
            return None
        self._at = found[0]
        return found[1]

    def _in_text(self, final: bool) -> bool:
        text, stop = self._body(final)
        self._text(text)
        return self._ended(stop, "")

    def _in_reasoning(self, final: bool) -> bool:
        text, stop = self._body(final)
        if self._split_reasoning:
            if text:
                self._add(ReasoningDelta(text))
        else:
            self._text(text)
        return self._ended(stop, "" if self._split_reasoning else stop or "")

    def _in_skip(self, final: bool) -> bool:
        _, stop = self._body(final)
        return self._ended(stop, "")

    def _ended(self, stop: str | None, shown: str) -> bool:
        """After a body: step over its end token (`shown` is given as text); a `<|start|>`
        is left for the next message."""
        if stop is None:
            return False
        if stop != START:
            self._at += len(stop)
        self._text(shown)
        self._mode = "start"
        return True

    def _open_call(self, name: str) -> None:
        self._name = name
        self._args = JsonScanner()
        self._call_started(name)
        self._mode = "call"

    def _in_call(self, final: bool) -> bool:
        args = self._args
        assert args is not None
        end, fed, stopped = feed_until(args, self.buf, BODY_STOPS, final, self._at)
        self._at = fed if end is None else end
        self._call_progress(args)
        if end is not None:
            self._call_done(call_from_arguments_text(self._name, args.raw, _CALL_FORM))
            self._mode = "skip"  # to the message's end token
            return True
        if args.invalid:
            self._call_done(unreadable(self._name, self.buf[self._at : self._at + 300], _CALL_FORM))
            self._mode = "skip"
            return True
        if stopped or final:
            self._call_done(cut_off(self._name, args.raw))
            self._mode = "skip"
            return True
        return False
