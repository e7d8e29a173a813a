"""Phi-4-mini (Microsoft) tool calls: a JSON list of `{"name", "arguments"}` objects.

Phi-4-mini-instruct writes `functools[{...}, ...]` (the marker its tool prompt asks for, as
vLLM's phi4_mini_json reads it); Phi-4 models with the `<|tool_call|>` token write the list
(or one object) between `<|tool_call|>` and `<|/tool_call|>`. Both are read by the array
reader shared with Mistral Nemo and Firefunction.
"""

from __future__ import annotations

from farmhand.parsing.call_array import CallArrayParser


class Phi4MiniParser(CallArrayParser):
    family = "phi4_mini"
    assistant_start = ("<|assistant|>",)
    markers = ("<|tool_call|>", "functools[")
    dropped_tokens = ("<|/tool_call|>", "</|tool_call|>", "<|end|>")
