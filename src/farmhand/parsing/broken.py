"""Calls the model meant but that cannot be read.

Where markup says a call is there (a tag, a marker, a call's head) and what follows cannot be
read, the call still comes back: no arguments, and a `parse_error` that quotes what the model
wrote and says how to write it. The loop answers the call with that error, so the model can
try again, instead of the markup leaking into the text or the call being lost.
"""

from __future__ import annotations

from farmhand.messages import ToolCall
from farmhand.parsing.base import call_from_object

# How much of what the model wrote an error quotes.
EXCERPT_LIMIT = 300
WRITE_IT_WHOLE = "write the whole call, or ask for fewer at once"
CALL_OBJECT = '{"name": ..., "arguments": {...}}'


def broken_call(name: str | None, error: str) -> ToolCall:
    """The call `name` (or "unknown", before its name was read) with `error`."""
    return ToolCall(name or "unknown", {}, parse_error=error)


def cut_off(name: str | None, written: str, fix: str = WRITE_IT_WHOLE) -> ToolCall:
    """A call the output ended in (or its closing token came inside of)."""
    return broken_call(
        name,
        f"the call to {name or 'a tool'} was cut off before it ended: {_excerpt(written)} ({fix})",
    )


def unreadable(name: str | None, written: str, expected: str) -> ToolCall:
    """A call whose text is not what its format asks for: `expected` says what is."""
    return broken_call(
        name, f"could not read the tool call {_excerpt(written)}: expected {expected}"
    )


def not_a_call_object(
    name: str | None, written: str, *, json_ok: bool, example: str = CALL_OBJECT
) -> ToolCall:
    """An object meant as a call that is not JSON (`json_ok` False), or not a call object."""
    what = "a call object" if json_ok else "valid JSON"
    return unreadable(name, written, f"{what} like {example}")


def call_from_arguments_text(name: str, raw: str, expected: str) -> ToolCall:
    """The call `name` with the JSON arguments text `raw`, or one with a parse error."""
    call = call_from_object({"name": name, "arguments": raw})
    return call if call is not None else unreadable(name, raw, expected)


def _excerpt(written: str) -> str:
    return repr(written.strip()[:EXCERPT_LIMIT])


class BrokenBody:
    """The start of a broken call's text, kept while it streams: as much as its error quotes
    (the rest is only skipped, so a long broken body costs no memory)."""

    def __init__(self) -> None:
        self._parts: list[str] = []
        self._length = 0

    def add(self, text: str) -> None:
        if self._length < EXCERPT_LIMIT:
            piece = text[: EXCERPT_LIMIT - self._length]
            self._parts.append(piece)
            self._length += len(piece)

    @property
    def text(self) -> str:
        return "".join(self._parts)
