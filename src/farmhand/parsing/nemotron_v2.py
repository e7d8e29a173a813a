"""NVIDIA Nemotron Nano v2 tool calls: a JSON array of call objects in `<TOOLCALL>` tags,

    <TOOLCALL>[{"name": "NAME", "arguments": {...}}]</TOOLCALL>

Reasoning is `<think>...</think>`, opened by the prompt; the model may write its own `<think>`
again, which is skipped.
"""

from __future__ import annotations

from farmhand.parsing.tagged_array import TaggedArrayParser


class NemotronV2Parser(TaggedArrayParser):
    family = "nemotron_v2"
    assistant_start = ("<SPECIAL_11>Assistant\n",)
    think_reopen_skipped = True
    markers = ("<TOOLCALL>",)
    closing = "</TOOLCALL>"
