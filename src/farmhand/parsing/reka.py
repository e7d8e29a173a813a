"""Reka (Reka Edge / Flash) tool calls: Hermes' `<tool_call>{json}</tool_call>`.

The calls are read as Hermes' are; what differs is the turn header, `assistant:` (a plain
text role, `<sep>` between turns), after which a thinking prompt writes `<think>\\n`.
"""

from __future__ import annotations

from farmhand.parsing.hermes import HermesParser


class RekaParser(HermesParser):
    family = "reka"
    assistant_start = ("assistant:",)
