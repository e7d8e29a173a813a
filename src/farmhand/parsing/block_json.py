"""A call object inside a family's block, read from the cursor up to the block's closing tag.

XML-ish families meet Hermes-style JSON inside their block (`<tool_call>{"name": ...}
</tool_call>`: models trained on Hermes write it under these templates too), and MiniMax M1
writes nothing else (`<tool_calls>` and one object a line). The closing tag inside a JSON
string is part of the value; the object streams its name and arguments as it is read.
"""

from __future__ import annotations

from typing import Literal

from farmhand.parsing.base import CursorParser, call_from_object
from farmhand.parsing.broken import cut_off, not_a_call_object
from farmhand.parsing.reader import CallObjectReader
from farmhand.parsing.scan import feed_until


class BlockJsonReading(CursorParser):
    def _block_json_call(
        self, reader: CallObjectReader, close: str, final: bool
    ) -> Literal["wait", "done", "broken"]:
        """Feed `reader` from the cursor, never past `close`: "done" once the call is
        reported (one the output or the tag cut off, or that is no call object, with a
        parse error), "broken" when it is not JSON (the cursor where it went wrong)."""
        end, fed, stopped = feed_until(reader, self.buf, (close,), final, self._at)
        while end is None and stopped and reader.scanner.in_string:
            reader.feed(close)  # the closing tag inside a JSON string: part of the value
            end, fed, stopped = feed_until(reader, self.buf, (close,), final, fed + len(close))
        if reader.invalid:
            self._at = fed
            return "broken"
        self._at = fed if end is None else end
        if reader.name is not None:
            self._call_started(reader.name)
            self._call_progress(reader)
        if end is None:
            if not stopped and not final:
                return "wait"
            self._call_done(cut_off(reader.name, reader.scanner.raw))
        else:
            value, ok = reader.value()
            call = call_from_object(value) if ok else None
            self._call_done(call or not_a_call_object(reader.name, reader.scanner.raw, json_ok=ok))
        return "done"
