"""Splitting a model's reasoning (`<think>...</think>` and the like) from its reply.

Reasoning is only recognised at the start of the output, or from the first character when
the prompt already opened it (templates that end with `<think>\\n`). Its surrounding
whitespace is trimmed, and so is the whitespace between it and the reply.
"""

from __future__ import annotations

from farmhand.messages import ReasoningDelta, StreamEvent, TextDelta
from farmhand.parsing.scan import WHITESPACE, held_prefix


class ThinkingSplitter:
    """Feeds on raw output; returns reasoning events and the text that is the reply.

    With `in_content`, reasoning stays in the reply wrapped in `<think>` tags (the form
    OpenAI-style clients that know no reasoning field expect).
    """

    def __init__(
        self,
        open_tag: str = "<think>",
        close_tag: str = "</think>",
        *,
        forced_open: bool = False,
        in_content: bool = False,
    ) -> None:
        self.open_tag = open_tag
        self.close_tag = close_tag
        self.in_content = in_content
        self._state = "start"
        self._buf = ""
        self._began = False  # some reasoning text has been emitted
        self._scan_from = 0
        self._space = 0  # how much leading whitespace has been skipped
        self._checked = 0  # the held text before this is whitespace
        if forced_open:
            self._enter_thinking([])

    def split(self, chunk: str, final: bool) -> tuple[list[StreamEvent], str]:
        self._buf += chunk
        events: list[StreamEvent] = []
        if self._state == "start":
            # Skip leading whitespace once: only the new part is looked at on each chunk.
            self._space = _skip_space(self._buf, self._space)
            head = self._buf[self._space : self._space + len(self.open_tag)]
            if head == self.open_tag:
                self._buf = self._buf[self._space + len(self.open_tag) :]
                self._enter_thinking(events)
            elif not final and self.open_tag.startswith(head):
                return events, ""  # whitespace so far, or the start of the tag
            else:
                self._state = "reply"
        if self._state == "thinking":
            self._think(events, final)
        if self._state == "after":
            self._space = _skip_space(self._buf, 0)
            if self._space == len(self._buf) and not final:
                self._buf = ""
                return events, ""
            self._buf = self._buf[self._space :]
            self._state = "reply"
        if self._state == "reply":
            text, self._buf = self._buf, ""
            return events, text
        return events, ""

    def _enter_thinking(self, events: list[StreamEvent]) -> None:
        self._state = "thinking"
        if self.in_content:
            events.append(TextDelta("<think>"))

    def _think(self, events: list[StreamEvent], final: bool) -> None:
        end = self._buf.find(self.close_tag, self._scan_from)
        if end >= 0:
            self._emit(events, self._buf[:end].rstrip(WHITESPACE))
            self._buf = self._buf[end + len(self.close_tag) :]
            self._state = "after"
            if self.in_content:
                events.append(TextDelta("</think>"))
            return
        if final:
            self._emit(events, self._buf.rstrip(WHITESPACE))
            self._buf = ""
            return
        # Hold back what may be the start of the closing tag, and trailing whitespace, which
        # is dropped if the tag follows. Everything before `_checked` is held whitespace
        # already, so only the new text is looked at.
        cut = len(self._buf) - held_prefix(self._buf, (self.close_tag,))
        last = cut - 1
        while last >= self._checked and self._buf[last] in WHITESPACE:
            last -= 1
        if last >= self._checked:
            self._emit(events, self._buf[: last + 1])
            self._buf = self._buf[last + 1 :]
            cut -= last + 1
        self._checked = cut
        self._scan_from = max(0, len(self._buf) - len(self.close_tag))

    def _emit(self, events: list[StreamEvent], text: str) -> None:
        if not self._began:
            text = text.lstrip(WHITESPACE)
        if not text:
            return
        self._began = True
        events.append(TextDelta(text) if self.in_content else ReasoningDelta(text))


def _skip_space(text: str, start: int) -> int:
    while start < len(text) and text[start] in WHITESPACE:
        start += 1
    return start
