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
        interrupts: tuple[str, ...] = (),
        repeated_open_skipped: bool = False,
    ) -> None:
        self.open_tag = open_tag
        self.close_tag = close_tag
        # Markers that end reasoning without its closing tag (Kimi K2 may start its calls
        # inside it): they are the reply's.
        self.interrupts = interrupts
        self._ends = (close_tag, *interrupts)
        self._longest_end = max(map(len, self._ends))
        # The model opens reasoning again after the prompt opened it (Nemotron Nano v2): the
        # second tag is not reasoning.
        self._skip_open = repeated_open_skipped
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
        if self._skip_open:
            head = self._buf.lstrip(WHITESPACE)
            if not final and self.open_tag.startswith(head):
                return  # whitespace so far, or the start of the tag
            self._skip_open = False
            if head.startswith(self.open_tag):
                self._buf = head[len(self.open_tag) :]
        end, tag = self._find_end()
        if end >= 0:
            self._emit(events, self._buf[:end].rstrip(WHITESPACE))
            self._buf = self._buf[end + (len(tag) if tag == self.close_tag else 0) :]
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
        cut = len(self._buf) - held_prefix(self._buf, self._ends)
        last = cut - 1
        while last >= self._checked and self._buf[last] in WHITESPACE:
            last -= 1
        if last >= self._checked:
            self._emit(events, self._buf[: last + 1])
            self._buf = self._buf[last + 1 :]
            cut -= last + 1
        self._checked = cut
        self._scan_from = max(0, len(self._buf) - self._longest_end)

    def _find_end(self) -> tuple[int, str]:
        """Where the reasoning ends (-1: not yet), and the tag or marker that ends it."""
        best = (-1, "")
        for tag in self._ends:
            at = self._buf.find(tag, self._scan_from)
            if at >= 0 and (best[0] < 0 or at < best[0]):
                best = (at, tag)
        return best

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
