"""AI2 OLMo 3 tool calls: Python calls, one a line, in `<function_calls>` tags,

    <function_calls>
    get_weather(city="Paris", days=3)
    get_time(zone=null)
    </function_calls>

as its chat template asks. Arguments are keywords with literal values (Python's, or JSON's
`true` / `false` / `null`), read with `ast`, never run. A call may run over several lines
(a long literal); a line that never becomes a call by the block's end is a call with a
parse error. Reasoning is `<think>...</think>`, which OLMo 3 Think's prompt opens.
"""

from __future__ import annotations

import ast
from collections.abc import Collection
from typing import Any

from farmhand.messages import ToolCall
from farmhand.parsing.base import CursorParser, ParserOptions
from farmhand.parsing.broken import cut_off, unreadable
from farmhand.parsing.scan import compact_json

CALLS_BEGIN = "<function_calls>"
CALLS_END = "</function_calls>"
_JSON_NAMES = {"true": True, "false": False, "null": None}
_CALL_FORM = 'one call a line, like name(key="value", n=1)'


class Olmo3Parser(CursorParser):
    family = "olmo3"
    assistant_start = ("<|im_start|>assistant\n",)

    def __init__(
        self, known_names: Collection[str] | None = None, *, options: ParserOptions | None = None
    ) -> None:
        super().__init__(known_names, options=options)
        self._mode = "text"  # text | calls | after
        self._pending = ""  # lines of a call not complete yet

    def _in_text(self, final: bool) -> bool:
        if self._text_to_call((CALLS_BEGIN,), final) is None:
            return False
        self._pending = ""
        self._mode = "calls"
        return True

    def _in_calls(self, final: bool) -> bool:
        """A line (or the block's end) at a time."""
        found = None
        for stop in ("\n", CALLS_END):
            at = self.buf.find(stop, self._at)
            if at >= 0 and (found is None or at < found[0]):
                found = (at, stop)
        if found is None:
            if not final:
                return False
            self._pending += self.buf[self._at :]
            self._at = len(self.buf)
            self._end_block(cut=True)
            return False
        at, stop = found
        self._pending += self.buf[self._at : at]
        self._at = at + len(stop)
        if stop == CALLS_END:
            self._end_block(cut=False)
            return True
        self._pending += "\n"
        if not self._pending.rstrip().endswith(")"):
            return True  # not the end of a call: a call's lines are parsed once, at its end
        call = _read_call(self._pending)
        if call is None and "\n" in self._pending.strip():
            # Lines that never became a call, then one that is a call on its own.
            last = self._pending.rstrip("\n").rsplit("\n", 1)[-1]
            call = _read_call(last)
            if call is not None:
                earlier = self._pending[: len(self._pending.rstrip("\n")) - len(last)]
                self._call_done(unreadable(None, earlier, _CALL_FORM))
        if call is not None:
            self._emit(call)
        return True

    def _end_block(self, *, cut: bool) -> None:
        if self._pending.strip():
            call = _read_call(self._pending)
            if call is not None:
                self._emit(call)
            elif cut:
                self._call_done(cut_off(None, self._pending))
            else:
                self._call_done(unreadable(None, self._pending, _CALL_FORM))
        self._pending = ""
        self._mode = "after"

    def _emit(self, call: ToolCall) -> None:
        self._pending = ""
        self._call_started(call.name)
        self._call_progress(compact_json(call.arguments))
        self._call_done(call)


def _read_call(source: str) -> ToolCall | None:
    """The call `source` writes, or None while it is not one (yet)."""
    if not source.strip():
        return None
    try:
        tree = ast.parse(source.strip(), mode="eval")
    except (SyntaxError, ValueError, RecursionError):
        return None
    node = tree.body
    if not isinstance(node, ast.Call) or node.args:
        return None
    name = _dotted(node.func)
    if name is None:
        return None
    arguments: dict[str, Any] = {}
    for keyword in node.keywords:
        if keyword.arg is None:
            return None
        value, ok = _literal(keyword.value)
        if not ok:
            return None
        arguments[keyword.arg] = value
    return ToolCall(name, arguments)


def _dotted(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        head = _dotted(node.value)
        return None if head is None else f"{head}.{node.attr}"
    return None


def _literal(node: ast.expr) -> tuple[Any, bool]:
    """A literal's value, JSON's names included; (None, False) for anything else."""
    if isinstance(node, ast.Name) and node.id in _JSON_NAMES:
        return _JSON_NAMES[node.id], True
    if isinstance(node, ast.List | ast.Tuple):
        items = [_literal(item) for item in node.elts]
        return [v for v, _ in items], all(ok for _, ok in items)
    if isinstance(node, ast.Dict):
        pairs = [
            (_literal(k) if k else (None, False), _literal(v))
            for k, v in zip(node.keys, node.values, strict=True)
        ]
        ok = all(k[1] and v[1] and isinstance(k[0], str) for k, v in pairs)
        return ({k[0]: v[0] for k, v in pairs} if ok else None), ok
    try:
        return ast.literal_eval(node), True
    except (ValueError, TypeError, SyntaxError, RecursionError):
        return None, False
