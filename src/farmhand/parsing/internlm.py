"""InternLM 2.5 / 3 (Shanghai AI Lab) tool calls:
`<|action_start|><|plugin|>\\n{"name": ..., "parameters": {...}}<|action_end|>`.

Text may come before the call (the model says what it is about to do). The object is read
by the array reader shared with Mistral Nemo (a lone object after the marker).
"""

from __future__ import annotations

from farmhand.parsing.call_array import CallArrayParser

ACTION_PLUGIN = "<|action_start|><|plugin|>"
ACTION_END = "<|action_end|>"


class InternLmParser(CallArrayParser):
    family = "internlm"
    assistant_start = ("<|im_start|>assistant\n",)
    markers = (ACTION_PLUGIN,)
    dropped_tokens = (ACTION_END,)
