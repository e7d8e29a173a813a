"""Firefunction v2 (Fireworks) tool calls: ` functools[{"name", "arguments"}, ...]`.

The template asks for every call of the turn in one JSON array after the `functools` marker
(written after a space, which goes with the marker; the space is sometimes left out). Text
before the marker, and after the array, is text.
"""

from __future__ import annotations

from farmhand.parsing.call_array import CallArrayParser
from farmhand.parsing.llama3 import LLAMA3_ASSISTANT

FUNCTOOLS = " functools["


class FirefunctionV2Parser(CallArrayParser):
    family = "firefunction_v2"
    assistant_start = (LLAMA3_ASSISTANT,)
    markers = (FUNCTOOLS, FUNCTOOLS.lstrip())
    marker_opens_array = True
