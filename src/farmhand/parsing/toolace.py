"""ToolACE (Team-ACE/ToolACE-8B and its kin) tool calls: the whole reply is a Python list,

    [get_weather(city="Paris"), get_time(zone="CET")]

as its model card's system prompt asks ("in the format of [func_name1(params_name1=
params_value1, ...), func_name2(params)]"; the same pythonic shape vLLM's pythonic parser
reads). A reply that opens with `[name(` is calls, read by the shared pythonic reader; any
other reply is text (ToolACE has no call tokens to find one later).
"""

from __future__ import annotations

from farmhand.parsing.pythonic import PythonicListParser


class ToolAceParser(PythonicListParser):
    family = "toolace"
    assistant_start = ("<|start_header_id|>assistant<|end_header_id|>\n\n",)
    bare_list_at_start = True

    def _in_text(self, final: bool) -> bool:
        self._text_to(len(self.buf))
        return False
