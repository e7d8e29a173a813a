"""LFM2 / LFM2.5 (Liquid AI) tool calls: `<|tool_call_start|>[f(a=1), g(b="x")]<|tool_call_end|>`.

The calls are a Python list of calls with keyword arguments (see `pythonic`); reasoning, in
the models that think, is a leading `<think>...</think>` block. The templates are ChatML.
"""

from __future__ import annotations

from farmhand.parsing.pythonic import PythonicListParser

TOOL_CALL_START = "<|tool_call_start|>"
TOOL_CALL_END = "<|tool_call_end|>"


class Lfm2Parser(PythonicListParser):
    family = "lfm2"
    assistant_start = ("<|im_start|>assistant\n",)
    start_marker = TOOL_CALL_START
    end_marker = TOOL_CALL_END
