"""MiniCPM 5 (OpenBMB) tool calls: one XML element per call, one per argument.

    <function name="f"><param name="code">print('x')</param></function>

A value with `<`, `&` or newlines is written in a CDATA block, whose text is taken as it
is (`</param>` included); other values run to `</param>`. Values are text, typed by the
tool's schema (see `typed_values`). Reasoning is a leading `<think>` block. Whatever follows
`<function name="` is a call: what cannot be read becomes a call with a parse error.
"""

from __future__ import annotations

from collections.abc import Collection

from farmhand.messages import ToolCall
from farmhand.parsing.arg_text import ArgumentText
from farmhand.parsing.base import CursorParser, ParserOptions
from farmhand.parsing.broken import cut_off, unreadable
from farmhand.parsing.typed_values import parameter_types, typed_value

FUNCTION = '<function name="'
FUNCTION_END = "</function>"
PARAM = '<param name="'
PARAM_END = "</param>"
CDATA = "<![CDATA["
CDATA_END = "]]>"
_NAME_END = '">'
_NAME_LIMIT = 256
_EXPECTED = f'{FUNCTION}NAME">{PARAM}KEY">VALUE{PARAM_END}{FUNCTION_END}'


class MiniCpmParser(CursorParser):
    family = "minicpm"
    assistant_start = ("<|im_start|>assistant\n",)

    def __init__(
        self, known_names: Collection[str] | None = None, *, options: ParserOptions | None = None
    ) -> None:
        super().__init__(known_names, options=options)
        self._mode = "text"  # text | name | params | key | value | cdata | close | broken | after
        self._name = ""
        self._key = ""
        self._values: dict[str, object] = {}
        self._args = ArgumentText()

    def _in_text(self, final: bool) -> bool:
        if self._text_to_marker((FUNCTION,), final) is None:
            return False
        self._mode = "name"
        return True

    def _read_name(self, final: bool) -> str | None:
        """A name up to `">` (bounded); "" when it cannot be one."""
        end = self.buf.find(_NAME_END, self._at, self._at + _NAME_LIMIT)
        if end < 0:
            if not final and len(self.buf) - self._at < _NAME_LIMIT:
                return None
            return ""
        name = self.buf[self._at : end]
        self._at = end + len(_NAME_END)
        return name

    def _in_name(self, final: bool) -> bool:
        name = self._read_name(final)
        if name is None:
            return False
        if not name:
            self._mode = "broken"
            return True
        self._name, self._values, self._args = name, {}, ArgumentText()
        self._call_started(name)
        self._mode = "params"
        return True

    def _in_params(self, final: bool) -> bool:
        """Between arguments: the next `<param name="`, or `</function>`."""
        if not self._skip_whitespace() and not final:
            return False
        if self._starts(PARAM):
            self._at += len(PARAM)
            self._mode = "key"
        elif self._starts(FUNCTION_END):
            self._at += len(FUNCTION_END)
            self._args.add("}" if self._values else "{}")
            self._call_progress(self._args)
            self._call_done(ToolCall(self._name, self._values))
            self._mode = "after"
        elif not final and (self._may_become(PARAM) or self._may_become(FUNCTION_END)):
            return False
        elif final and self._at >= len(self.buf):
            self._call_done(cut_off(self._name, self._written()))
            self._mode = "after"
            return False
        else:
            self._mode = "broken"
        return True

    def _in_key(self, final: bool) -> bool:
        key = self._read_name(final)
        if key is None:
            return False
        if not key:
            self._mode = "broken"
            return True
        self._key = key
        self._args.add(("{" if not self._values else ", ") + _json_key(key))
        self._call_progress(self._args)
        self._mode = "value"
        return True

    def _in_value(self, final: bool) -> bool:
        if self._starts(CDATA):
            self._at += len(CDATA)
            self._mode = "cdata"
            return True
        if self._may_become(CDATA) and not final:
            return False
        return self._take_value(PARAM_END, final)

    def _in_cdata(self, final: bool) -> bool:
        return self._take_value(CDATA_END, final)

    def _take_value(self, stop: str, final: bool) -> bool:
        value = self._read_to_stop((stop,), final)
        if value is None:
            return False
        if not self._starts(stop):
            self._call_done(cut_off(self._name, self._written() + value))
            self._mode = "after"
            return False
        self._at += len(stop)
        types = parameter_types(self.options.tool_schemas, self._name, self._key)
        self._values[self._key] = typed_value(value, types)
        self._args.add_value(self._values[self._key])
        self._call_progress(self._args)
        self._mode = "close" if stop == CDATA_END else "params"
        return True

    def _in_close(self, final: bool) -> bool:
        """`</param>` after a CDATA block."""
        if not self._step_over(PARAM_END, final):
            return False
        self._mode = "params"
        return True

    def _in_broken(self, final: bool) -> bool:
        body = self._read_to_stop((FUNCTION_END,), final)
        if body is None:
            return False
        self._at += len(FUNCTION_END) if self._starts(FUNCTION_END) else 0
        self._call_done(unreadable(self._name or None, self._written() + body, _EXPECTED))
        self._name = ""
        self._mode = "after"
        return True

    def _written(self) -> str:
        return f'{FUNCTION}{self._name}">' + "".join(
            f'{PARAM}{k}">{v}{PARAM_END}' for k, v in self._values.items()
        )


def _json_key(key: str) -> str:
    text = ArgumentText()
    text.add_value(key)
    return text.text + ": "
