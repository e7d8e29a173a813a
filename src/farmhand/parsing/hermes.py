"""Hermes-style tool calls: `<tool_call>{json}</tool_call>` (Hermes 2 Pro / 3, Qwen 2.5).

Small models asked for this format also write the JSON bare, or inside a ```json fence.
Those count as calls only when they can be nothing else: the whole reply is call JSON, or a
fenced block holds only call objects naming known tools. JSON inside prose stays prose.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection

from farmhand.messages import StreamEvent, TextDelta, ToolCall, ToolCallEvent
from farmhand.parsing.base import call_from_object, calls_from_json_text, calls_from_values

OPEN_TAG = "<tool_call>"
CLOSE_TAG = "</tool_call>"
FENCE = "```"
_NAME_RE = re.compile(r'"name"\s*:\s*"([^"]+)"')
_DECODER = json.JSONDecoder()


def _held_prefix(text: str, markers: tuple[str, ...]) -> int:
    """Length of the longest suffix of `text` that could still grow into a marker."""
    best = 0
    for marker in markers:
        for n in range(min(len(marker) - 1, len(text)), 0, -1):
            if text.endswith(marker[:n]):
                best = max(best, n)
                break
    return best


class HermesParser:
    def __init__(self, known_names: Collection[str] | None = None) -> None:
        self.known_names = known_names
        self._buf = ""
        self._mode = "start"  # start | text | tag | fence | bare
        self._scan_from = 0  # where the next search for a closing marker begins
        self._bare_calls = False  # a bare reply has produced calls: it is a run of calls

    def feed(self, chunk: str) -> list[StreamEvent]:
        self._buf += chunk
        return self._advance(final=False)

    def finish(self) -> list[StreamEvent]:
        events = self._advance(final=True)
        rest, self._buf = self._buf, ""
        if self._mode == "tag":
            events += self._tagged_call(rest[len(OPEN_TAG) :])
        elif self._mode == "fence":
            events += self._fenced(rest)
        elif self._mode == "bare":
            events += self._bare(rest)
        elif rest:
            events.append(TextDelta(rest))
        return events

    def _advance(self, final: bool) -> list[StreamEvent]:
        events: list[StreamEvent] = []
        while self._buf:
            if self._mode == "start":
                stripped = self._buf.lstrip()
                if not stripped:
                    return events
                # A reply that opens with JSON may be a bare call: decide at the end.
                self._mode = "bare" if stripped[0] in "{[" else "text"
            if self._mode == "bare":
                return events + self._bare_step()
            if self._mode == "text":
                if not self._text_step(events, final):
                    return events
            elif self._mode == "tag":
                end = self._buf.find(CLOSE_TAG, max(self._scan_from, len(OPEN_TAG)))
                if end < 0:
                    self._scan_from = max(len(OPEN_TAG), len(self._buf) - len(CLOSE_TAG))
                    return events
                events += self._tagged_call(self._buf[len(OPEN_TAG) : end])
                self._consume(end + len(CLOSE_TAG), "text")
            elif self._mode == "fence":
                end = self._buf.find(FENCE, max(self._scan_from, len(FENCE)))
                if end < 0:
                    self._scan_from = max(len(FENCE), len(self._buf) - len(FENCE))
                    return events
                events += self._fenced(self._buf[: end + len(FENCE)])
                self._consume(end + len(FENCE), "text")
        return events

    def _text_step(self, events: list[StreamEvent], final: bool) -> bool:
        """Emit plain text up to the next marker; False when more input is needed."""
        positions = [(self._buf.find(m), m) for m in (OPEN_TAG, FENCE)]
        found = [(i, m) for i, m in positions if i >= 0]
        if not found:
            keep = 0 if final else _held_prefix(self._buf, (OPEN_TAG, FENCE))
            if len(self._buf) > keep:
                events.append(TextDelta(self._buf[: len(self._buf) - keep]))
                self._buf = self._buf[len(self._buf) - keep :]
            return False
        index, marker = min(found)
        if index:
            events.append(TextDelta(self._buf[:index]))
        self._consume(index, "tag" if marker == OPEN_TAG else "fence")
        return True

    def _consume(self, n: int, mode: str) -> None:
        self._buf = self._buf[n:]
        self._mode = mode
        self._scan_from = 0

    def _tagged_call(self, body: str) -> list[StreamEvent]:
        # Inside explicit tags the intent is clear: a broken body is a broken call, not text.
        calls = calls_from_json_text(body, None)
        if calls:
            return [ToolCallEvent(c) for c in calls]
        match = _NAME_RE.search(body)
        call = call_from_object({"name": match.group(1)}) if match else None
        name = call.name if call else "unknown"
        error = (
            f"could not read the tool call: {body.strip()[:300]!r} is not a JSON object"
            " with name and arguments"
        )
        return [ToolCallEvent(ToolCall(name, {}, parse_error=error))]

    def _fenced(self, block: str) -> list[StreamEvent]:
        inner = block[len(FENCE) :]
        if inner.endswith(FENCE):
            inner = inner[: -len(FENCE)]
        first_line, _, body = inner.partition("\n")
        if first_line.strip().lower() not in ("", "json", "tool_call", "tool_code"):
            return [TextDelta(block)]
        calls = calls_from_json_text(body if first_line.strip() else inner, self.known_names)
        if calls is None:
            return [TextDelta(block)]
        return [ToolCallEvent(c) for c in calls]

    def _bare_step(self) -> list[StreamEvent]:
        """Emit each complete call of a bare reply as soon as it closes, so a model that
        writes call after call can be stopped early."""
        events: list[StreamEvent] = []
        while True:
            stripped = self._buf.lstrip(" \t\r\n;,")
            try:
                value, end = _DECODER.raw_decode(stripped)
            except json.JSONDecodeError:
                return events  # incomplete so far (or not JSON: decided at the end)
            calls = calls_from_values(
                value if isinstance(value, list) else [value], self.known_names
            )
            if calls is None:
                if self._bare_calls:  # after calls, anything else is text
                    self._mode = "text"
                return events  # a first value that is not a call is decided at the end
            self._bare_calls = True
            self._buf = stripped[end:]
            events += [ToolCallEvent(c) for c in calls]

    def _bare(self, text: str) -> list[StreamEvent]:
        if self._bare_calls:
            # What is left after a run of calls: a call cut off by the token limit is
            # dropped, anything else is text.
            rest = text.strip()
            return [TextDelta(text)] if rest and not rest.startswith("{") else []
        calls = calls_from_json_text(text, self.known_names)
        if calls is None:
            return [TextDelta(text)]
        return [ToolCallEvent(c) for c in calls]
