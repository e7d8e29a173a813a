"""Functionary (MeetKai) tool calls, v3.1 (Llama 3.1 based) and v3.2.

v3.1: `<function=NAME>{json arguments}</function>`, as many as the model writes, with text
around them; `<|python_tag|>` followed by code, to the end of the output, calls the python
tool with `{"code": code}`. A call is complete when its JSON closes: the closing tag is not
waited for.

v3.2: the turn is a run of messages, each `>>>RECIPIENT\\n` then its body: `all` is text for
the user; a function name is followed by its JSON arguments; `python` by code (or JSON).
The prompt writes the first `>>>`, so the reply may start at the recipient; there (with no
`>>>` written) a name counts only when JSON follows at once, and, when the tools are known,
only when it names one. `>>>` that is not followed by a recipient line is text.
"""

from __future__ import annotations

import re
from collections.abc import Collection

from farmhand.parsing.base import ParserOptions, is_known_tool
from farmhand.parsing.broken import BrokenBody, call_from_arguments_text, cut_off, unreadable
from farmhand.parsing.llama3 import LLAMA3_ASSISTANT
from farmhand.parsing.python_calls import PYTHON_TAG, RawCodeParser
from farmhand.parsing.scan import WHITESPACE, JsonScanner, held_prefix

FUNCTION_OPEN = "<function="
FUNCTION_CLOSE = "</function>"
RECIPIENT_MARK = ">>>"
_NAME_LIMIT = 128
_NAME_CHAR = re.compile(r"[\w.:\-]")
_EXPECTED_ARGS = "a JSON object of arguments"


class FunctionaryV31Parser(RawCodeParser):
    family = "functionary_v3_1_llama3_1"
    assistant_start = (LLAMA3_ASSISTANT,)

    def __init__(
        self, known_names: Collection[str] | None = None, *, options: ParserOptions | None = None
    ) -> None:
        super().__init__(known_names, options=options)
        self._mode = "text"  # text | name | args | broken | close | code
        self._name = ""
        self._args: JsonScanner | None = None
        self._broken = BrokenBody()  # a body that is not JSON
        self._closing = False  # the closing tag may follow

    def _in_text(self, final: bool) -> bool:
        buf = self.buf
        function_at = buf.find(FUNCTION_OPEN)
        tag_at = buf.find(PYTHON_TAG, 0, function_at if function_at >= 0 else len(buf))
        if tag_at >= 0:
            self._text(buf[:tag_at])
            self.buf = buf[tag_at + len(PYTHON_TAG) :]
            self._open_code()
            return True
        if function_at >= 0:
            self._text(buf[:function_at])
            self.buf = buf[function_at + len(FUNCTION_OPEN) :]
            self._mode = "name"
            return True
        end = len(buf) if final else len(buf) - held_prefix(buf, (FUNCTION_OPEN, PYTHON_TAG))
        self._text(buf[:end])
        self.buf = buf[end:]
        return False

    def _in_name(self, final: bool) -> bool:
        """After `<function=`: the name, up to `>`; anything else makes it text."""
        end = self.buf.find(">", 0, _NAME_LIMIT + 1)
        if end < 0:
            if not final and len(self.buf) <= _NAME_LIMIT and not _breaks_name(self.buf):
                return False
            return self._not_a_call()
        name = self.buf[:end].strip().strip("\"'").strip()
        if not name or _breaks_name(self.buf[:end]):
            return self._not_a_call()
        self._name = name
        self.buf = self.buf[end + 1 :]
        self._args = JsonScanner()
        self._call_started(name)
        self._mode = "args"
        return True

    def _not_a_call(self) -> bool:
        self._text(FUNCTION_OPEN)
        self._mode = "text"
        return True

    def _in_args(self, final: bool) -> bool:
        args = self._args
        assert args is not None
        # The JSON is read up to the closing tag, never past it: a tag inside it means the
        # JSON is broken, not that the tag is part of a string.
        close_at = self.buf.find(FUNCTION_CLOSE)
        readable = (
            close_at if close_at >= 0 else len(self.buf) - held_prefix(self.buf, (FUNCTION_CLOSE,))
        )
        end = args.feed(self.buf[:readable])
        if args.invalid:
            self._broken = BrokenBody()
            self._mode = "broken"
            return True
        self.buf = self.buf[readable if end is None else end :]
        self._call_progress(args)
        if end is not None:
            self._call_done(call_from_arguments_text(self._name, args.raw, _EXPECTED_ARGS))
            self._closing = True
            self._mode = "close"
            return True
        if close_at >= 0:
            self.buf = self.buf[len(FUNCTION_CLOSE) :]
            self._call_done(
                unreadable(self._name, args.raw, f"{_EXPECTED_ARGS} before {FUNCTION_CLOSE}")
            )
            self._mode = "close"
            return True
        if final:
            self._call_done(cut_off(self._name, FUNCTION_OPEN + self._name + ">" + args.raw))
            self.buf = ""
        return False

    def _in_broken(self, final: bool) -> bool:
        """A body that is not JSON: the call the model meant, with what it wrote, to the
        closing tag (or the end)."""
        close_at = self.buf.find(FUNCTION_CLOSE)
        take = close_at if close_at >= 0 else len(self.buf)
        if close_at < 0 and not final:
            take -= held_prefix(self.buf, (FUNCTION_CLOSE,))
        self._broken.add(self.buf[:take])
        if close_at < 0 and not final:
            self.buf = self.buf[take:]
            return False
        self.buf = self.buf[take + len(FUNCTION_CLOSE) :] if close_at >= 0 else ""
        self._call_done(unreadable(self._name, self._broken.text, _EXPECTED_ARGS))
        self._mode = "close"
        return True

    def _in_close(self, final: bool) -> bool:
        """After a call's JSON: its closing tag, if written, and whitespace."""
        rest = self.buf.lstrip(WHITESPACE)
        if self._closing:
            if rest.startswith(FUNCTION_CLOSE):
                rest = rest[len(FUNCTION_CLOSE) :].lstrip(WHITESPACE)
            elif not final and FUNCTION_CLOSE.startswith(rest):
                self.buf = rest
                return False
            self._closing = False
        self.buf = rest
        if not rest and not final:
            return False
        self._mode = "text"
        return True


def _breaks_name(text: str) -> bool:
    """Text after `<function=` that no call name has (a line break, a tag, JSON)."""
    return any(c in text for c in "\n<{")


class FunctionaryV32Parser(RawCodeParser):
    family = "functionary_v3_2"
    assistant_start = (LLAMA3_ASSISTANT,)

    def __init__(
        self, known_names: Collection[str] | None = None, *, options: ParserOptions | None = None
    ) -> None:
        super().__init__(known_names, options=options)
        self._mode = "start"  # start | recipient | text | args | broken | code | after
        self._marked = False  # the recipient being read follows `>>>`
        self._name = ""
        self._args: JsonScanner | None = None
        self._broken = BrokenBody()

    def _in_start(self, final: bool) -> bool:
        """The reply starts at a recipient, after `>>>` or without it (the prompt wrote it)."""
        if self.buf.startswith(RECIPIENT_MARK):
            self.buf = self.buf[len(RECIPIENT_MARK) :]
            self._marked = True
        elif not final and RECIPIENT_MARK.startswith(self.buf):
            return False
        else:
            self._marked = False
        self._mode = "recipient"
        return True

    def _in_recipient(self, final: bool) -> bool:
        """`NAME\\n`, then what the recipient says: text (all), code (python) or JSON."""
        buf = self.buf
        end = 0
        while end < len(buf) and end <= _NAME_LIMIT and _NAME_CHAR.match(buf, end):
            end += 1
        if end == len(buf) and end <= _NAME_LIMIT and not final:
            return False
        if end == 0 or end >= len(buf) or buf[end] != "\n":
            return self._not_a_recipient()
        name, body = buf[:end], end + 1
        if name == "all":
            self.buf = buf[body:]
            self._mode = "text"
            return True
        if body == len(buf) and not final:
            return False
        if name == "python" and not buf.startswith("{", body):
            self.buf = buf[body:]
            self._open_code()
            return True
        if self._marked:
            # `>>>name\n`: JSON follows, after whitespace perhaps.
            start = body
            while start < len(buf) and buf[start] in WHITESPACE:
                start += 1
            if start == len(buf) and not final:
                return False
            opens = buf.startswith("{", start)
        else:
            known = self.options.known_names
            opens = buf.startswith("{", body) and (known is None or is_known_tool(name, known))
        if not opens and self._marked and self._offered(name):
            # `>>>tool\n` naming an offered tool: a call the model meant, whatever follows.
            self._name = name
            self.buf = buf[body:]
            self._call_started(name)
            self._broken = BrokenBody()
            self._mode = "broken"
            return True
        if not opens:
            return self._not_a_recipient()
        self._name = name
        self.buf = buf[body:]
        self._args = JsonScanner()
        self._call_started(name)
        self._mode = "args"
        return True

    def _offered(self, name: str) -> bool:
        known = self.options.known_names
        return known is not None and is_known_tool(name, known)

    def _in_broken(self, final: bool) -> bool:
        """A call to an offered tool without JSON: what it wrote, to the next `>>>` (or the
        end), comes back to it as a parse error."""
        at = self.buf.find(RECIPIENT_MARK)
        take = at if at >= 0 else len(self.buf)
        if at < 0 and not final:
            take -= held_prefix(self.buf, (RECIPIENT_MARK,))
        self._broken.add(self.buf[:take])
        self.buf = self.buf[take:]
        if at < 0 and not final:
            return False
        self._call_done(unreadable(self._name, self._broken.text, _EXPECTED_ARGS))
        self._mode = "text"
        return True

    def _not_a_recipient(self) -> bool:
        if self._marked:
            self._text(RECIPIENT_MARK)
        self._mode = "text"
        return True

    def _in_text(self, final: bool) -> bool:
        at = self.buf.find(RECIPIENT_MARK)
        if at >= 0:
            self._text(self.buf[:at])
            self.buf = self.buf[at + len(RECIPIENT_MARK) :]
            self._marked = True
            self._mode = "recipient"
            return True
        end = len(self.buf) if final else len(self.buf) - held_prefix(self.buf, (RECIPIENT_MARK,))
        self._text(self.buf[:end])
        self.buf = self.buf[end:]
        return False

    def _in_args(self, final: bool) -> bool:
        args = self._args
        assert args is not None
        end = args.feed(self.buf)
        self.buf = "" if end is None else self.buf[end:]
        self._call_progress(args)
        if end is None:
            if final:
                self._call_done(cut_off(self._name, f">>>{self._name}\n{args.raw}"))
            return False
        self._call_done(call_from_arguments_text(self._name, args.raw, _EXPECTED_ARGS))
        self._mode = "after"
        return True
