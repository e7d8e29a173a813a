"""Salesforce xLAM tool calls: the whole reply is a JSON array of call objects,

    [{"name": "NAME", "arguments": {...}}, ...]

as xLAM-2's chat template asks (sometimes in a ```json fence; sources: the template,
vLLM's xLAMToolParser and its example templates tool_chat_template_xlam_llama/_qwen). Only
an array at the start of the reply whose first element starts like a call object is calls:
its name, then "arguments" (or "parameters", "id", "type") or its end; a first element
whose name is followed by another key ("description") is a tool's definition echoed, and
the reply is text, as is any other reply. The array is read by the shared call-array
reader. Reasoning is `<think>...</think>`; an array of calls the model opens inside a
reasoning block it never closed ends the reasoning.
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
# The first element's name and what follows it: a key (group 1), or the object's end.
_FIRST_KEY = re.compile(
    r'\[\s*\{\s*"name"\s*:\s*"(?:[^"\\]|\\.)*"\s*(?:,\s*"((?:[^"\\]|\\.)*)"|\})'
)
CALL_KEYS = ("arguments", "parameters", "id", "type")
# How far into the array its first key is looked for before the array is taken as calls.
_HEAD_LIMIT = 512
# What may still grow into the head of an array of calls.
_CALLS_HEAD_PREFIX = re.compile(r'\[(?:\s*(?:\{\s*(?:"(?:n(?:a(?:m(?:e)?)?)?)?)?)?)?$')


class XlamParser(CallArrayParser):
    family = "xlam"
    think_interrupts = ('[{"name"', '[{ "name"', '```json\n[{"name"')
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
            first = _FIRST_KEY.match(body)
            if first is None and not final and len(body) < _HEAD_LIMIT:
                return False  # not yet known whether a call or a definition
            if first is not None and first.group(1) not in (None, *CALL_KEYS):
                self._mode = "text"  # a tool's definition, echoed
                return True
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
