"""NVIDIA Nemotron Nano v2 tool calls: a JSON array of call objects in `<TOOLCALL>` tags,

    <TOOLCALL>[{"name": "NAME", "arguments": {...}}]</TOOLCALL>

read by the shared call-array reader. Reasoning is `<think>...</think>`, opened by the
prompt; the model may write its own `<think>` again, which is skipped.
"""

from __future__ import annotations

from farmhand.parsing.call_array import CallArrayParser
from farmhand.parsing.scan import WHITESPACE

TOOLCALL = "<TOOLCALL>"
TOOLCALL_END = "</TOOLCALL>"


class NemotronV2Parser(CallArrayParser):
    family = "nemotron_v2"
    assistant_start = ("<SPECIAL_11>Assistant\n",)
    think_reopen_skipped = True
    markers = (TOOLCALL,)

    def _in_after(self, final: bool) -> bool:
        """After the array: its closing tag, if written, then text again."""
        stripped = self.buf.lstrip(WHITESPACE)
        if stripped.startswith(TOOLCALL_END):
            self.buf = stripped[len(TOOLCALL_END) :]
            return True
        if stripped and TOOLCALL_END.startswith(stripped) and not final:
            self.buf = stripped
            return False
        return super()._in_after(final)
