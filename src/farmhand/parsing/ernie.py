"""Baidu ERNIE 4.5 tool calls: `<tool_call>\\n{"name": ..., "arguments": {...}}\\n</tool_call>`.

The thinking models end their reasoning with `</think>` (the prompt may have opened it) and
may wrap the reply in `<response>...</response>`, whose tags are not text (as vLLM's
ernie45 parser reads it). Each call object is read by the array reader shared with Mistral
Nemo, so a `</tool_call>` inside a string argument does not end the call.
"""

from __future__ import annotations

from farmhand.parsing.call_array import CallArrayParser


class ErnieParser(CallArrayParser):
    family = "ernie4_5"
    assistant_start = ("<|im_start|>assistant\n", "Assistant: ")
    markers = ("<tool_call>",)
    dropped_tokens = ("</tool_call>", "<response>", "</response>")
