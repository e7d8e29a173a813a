"""AI21 Jamba 1.5+ tool calls: `<tool_calls>[{"name": ..., "arguments": {...}}]</tool_calls>`.

Turns are `<|bom|><|role|> ...<|eom|>`; the calls are a JSON list read by the array reader
shared with Mistral Nemo.
"""

from __future__ import annotations

from farmhand.parsing.call_array import CallArrayParser


class JambaParser(CallArrayParser):
    family = "jamba"
    assistant_start = ("<|bom|><|assistant|>",)
    markers = ("<tool_calls>",)
    dropped_tokens = ("</tool_calls>", "<|eom|>")
