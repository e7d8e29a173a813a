"""Salesforce xLAM tool calls: the whole reply is a JSON array of call objects,

    [{"name": "NAME", "arguments": {...}}, ...]

as xLAM-2's chat template asks (sometimes in a ```json fence). Only an array at the start
of the reply whose first element starts like a call object is calls; any other reply is
text. The array is read by the shared call-array reader.
"""

from __future__ import annotations

import re
from collections.abc import Collection

from farmhand.parsing.base import ParserOptions
from farmhand.parsing.call_array import CallArrayParser
from farmhand.parsing.scan import WHITESPACE

FENCE = "```"
FENCE_OPENERS = ("```json\n", "```\n")
_CALLS_HEAD = re.compile(r'\[\s*\{\s*"name"')
# What may still grow into the head of an array of calls.
_CALLS_HEAD_PREFIX = re.compile(r'\[(?:\s*(?:\{\s*(?:"(?:n(?:a(?:m(?:e)?)?)?)?)?)?)?$')


class XlamParser(CallArrayParser):
    family = "xlam"
    assistant_start = (
        "<|im_start|>assistant\n",
        "<|start_header_id|>assistant<|end_header_id|>\n\n",
    )

    def __init__(
        self, known_names: Collection[str] | None = None, *, options: ParserOptions | None = None
    ) -> None:
        super().__init__(known_names, options=options)
        self._mode = "start"  # start | text | the array's modes
        self._fenced = False

    def _in_start(self, final: bool) -> bool:
        """At the reply's start: an array of calls (fenced or not), or text."""
        head = self.buf.lstrip(WHITESPACE)
        opener = next((o for o in FENCE_OPENERS if head.startswith(o)), "")
        if not opener and not final and any(o.startswith(head) for o in FENCE_OPENERS):
            return False
        body = head[len(opener) :].lstrip(WHITESPACE)
        if _CALLS_HEAD.match(body):
            self._fenced = bool(opener)
            self.buf = body[1:]
            self._open_array("[")
            return True
        if not final and (not body or _CALLS_HEAD_PREFIX.match(body)):
            return False
        self._mode = "text"
        return True

    def _in_text(self, final: bool) -> bool:
        self._text(self.buf)
        self.buf = ""
        return False

    def _in_after(self, final: bool) -> bool:
        """After the array: the closing fence, if the array was fenced, then text."""
        stripped = self.buf.lstrip(WHITESPACE)
        if self._fenced and stripped.startswith(FENCE):
            self.buf = stripped[len(FENCE) :]
            self._fenced = False
            return True
        if self._fenced and stripped and FENCE.startswith(stripped) and not final:
            self.buf = stripped
            return False
        return super()._in_after(final)
