"""Apertus (Swiss AI) tool calls: `<|tools_prefix|>[{"NAME": {arguments}}, ...]<|tools_suffix|>`.

Each call is an object with one key, the tool's name, whose value is the arguments (read by
the array reader shared with Mistral Nemo, with its own call objects). Reasoning is a
leading `<|inner_prefix|>...<|inner_suffix|>` block.
"""

from __future__ import annotations

import re
from typing import Any

from farmhand.messages import ToolCall
from farmhand.parsing.base import call_from_object
from farmhand.parsing.call_array import CallArrayParser

_STRING = r'"(?P<name>(?:[^"\\]|\\.)*)"'
NAME = re.compile(r"\s*\{\s*" + _STRING)
ARGS = re.compile(r"\s*\{\s*" + _STRING + r"\s*:")


class ApertusParser(CallArrayParser):
    family = "apertus"
    think_open = "<|inner_prefix|>"
    think_close = "<|inner_suffix|>"
    assistant_start = ("<|assistant_start|>",)
    markers = ("<|tools_prefix|>",)
    dropped_tokens = ("<|tools_suffix|>",)
    name_re = NAME
    args_re = ARGS

    def _call_of(self, value: Any) -> ToolCall | None:
        if not isinstance(value, dict) or len(value) != 1:
            return None
        ((name, arguments),) = value.items()
        return call_from_object({"name": name, "arguments": arguments})
