"""Mistral Nemo tool calls: `[TOOL_CALLS][{"name", "arguments", "id"}, ...]`.

The calls are a JSON array after the marker, each object with the call's `id` (nine
alphanumerics), which the tool's result must quote back, so it is kept as the call's id.
Text before the marker, and after the array, is text (see `call_array`, shared with
Firefunction v2).
"""

from __future__ import annotations

from farmhand.parsing.call_array import CallArrayParser

TOOL_CALLS = "[TOOL_CALLS]"


class MistralNemoParser(CallArrayParser):
    family = "mistral_nemo"
    assistant_start = ("[/INST]",)
    markers = (TOOL_CALLS,)
