"""AI2 OLMo 3 tool calls: Python calls, one a line, in `<function_calls>` tags,

    <function_calls>
    get_weather(city="Paris", days=3)
    get_time(zone=null)
    </function_calls>

as its chat template asks (source: the template in allenai/Olmo-3's tokenizer_config.json,
and vLLM's Olmo3PythonicToolParser). Arguments are keywords with literal values (Python's,
or JSON's `true` / `false` / `null`), read with `ast`, never run, by the shared pythonic
reader: a client sees each call's name once its `(` is written, then each argument as its
value ends. A call may run over several lines (a long literal); what in the block is not a
call is a call with a parse error. Reasoning is `<think>...</think>`, which OLMo 3 Think's
prompt opens.
"""

from __future__ import annotations

from farmhand.parsing.pythonic import PythonicListParser

CALLS_BEGIN = "<function_calls>"
CALLS_END = "</function_calls>"


class Olmo3Parser(PythonicListParser):
    family = "olmo3"
    assistant_start = ("<|im_start|>assistant\n",)
    start_marker = CALLS_BEGIN
    end_marker = CALLS_END
    expected = 'one call a line, like name(key="value", n=1)'

    def _in_text(self, final: bool) -> bool:
        # The whitespace before the block is the block's, not the text's.
        if self._text_to_call((CALLS_BEGIN,), final) is None:
            return False
        self._mode = "open"
        return True

    def _in_between(self, final: bool) -> bool:
        """After a call: the next line's call, or the block's end."""
        if not self._skip_whitespace() and not final:
            return False
        if self._at_end_marker() or self._at >= len(self.buf):
            return super()._in_between(final)
        if self._may_become(CALLS_END):
            if not final:
                return False
            self._at = len(self.buf)  # the output ended inside the block's end: not text
            self._mode = "after"
            return False
        self._at += self._starts(",")
        self._mode = "head"
        return True
