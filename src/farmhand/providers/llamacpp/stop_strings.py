"""A request's stop strings, found in text that arrives a token at a time.

A stop string is often several tokens long (`"\\n\\nHuman:"`), so a piece is not checked on
its own: the end of the text that could still begin a stop string is held back until the
next piece says whether it does. What is let through never holds a stop string; once one is
complete the text before it is the last, and `matched` says which stop ended the turn (what
Anthropic's `stop_sequence` reports).
"""

from __future__ import annotations

from collections.abc import Sequence

from farmhand.messages import Finish, Usage


class StopStrings:
    def __init__(self, stops: Sequence[str]) -> None:
        self.stops = tuple(s for s in stops if s)
        self.held = ""
        self.matched: str | None = None

    def feed(self, piece: str) -> str:
        """The text that is sure to be answer, up to and without the first stop string
        (`matched` then names it; feed no more), less a tail that may begin one."""
        if not self.stops:
            return piece
        text = self.held + piece
        found = [(text.find(stop), len(stop), stop) for stop in self.stops if stop in text]
        if found:
            cut, _, self.matched = min(found)  # the earliest; of two there, the shorter
            self.held = ""
            return text[:cut]
        keep = self._tail_that_may_begin_a_stop(text)
        self.held = text[len(text) - keep :]
        return text[: len(text) - keep]

    def flush(self) -> str:
        """What was held back, once the text has ended without completing a stop."""
        text, self.held = self.held, ""
        return text

    def finish(self, out_of_tokens: bool, usage: Usage) -> Finish:
        """How a turn without calls ended: at a stop string (named), out of tokens, or done."""
        if self.matched is not None:
            return Finish("stop", usage, stop_sequence=self.matched)
        return Finish("length" if out_of_tokens else "stop", usage)

    def _tail_that_may_begin_a_stop(self, text: str) -> int:
        longest = min(len(text), max(len(stop) for stop in self.stops) - 1)
        for size in range(longest, 0, -1):
            tail = text[-size:]
            if any(stop.startswith(tail) for stop in self.stops):
                return size
        return 0
