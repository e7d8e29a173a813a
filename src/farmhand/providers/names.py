"""Provider-safe tool names.

farmhand names MCP tools `server:tool`, but OpenAI-style APIs only accept names matching
`^[a-zA-Z0-9_-]{1,64}$` (and several local servers enforce the same rule). A ToolNameMap
gives every farmhand name a safe, unique stand-in for one request and maps the model's
answers back.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Sequence

from farmhand.messages import Message
from farmhand.tools.definition import SEPARATOR, ToolDefinition

MAX_LENGTH = 64
_SAFE = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
_FORBIDDEN = re.compile(r"[^a-zA-Z0-9_-]")
_HASH_LENGTH = 8


def is_safe(name: str) -> bool:
    return bool(_SAFE.match(name))


def sanitize(name: str) -> str:
    """`server:tool` -> `server__tool`; any other forbidden character -> `_` (no length cut)."""
    return _FORBIDDEN.sub("_", name.replace(SEPARATOR, "__"))


def _hashed(name: str, base: str, digits: int) -> str:
    # The suffix hashes the original name, so the same name gets the same stand-in in every
    # request, whatever other tools are listed with it.
    digest = hashlib.sha256(name.encode("utf-8")).hexdigest()[:digits]
    return f"{base[: MAX_LENGTH - digits - 1]}_{digest}"


class ToolNameMap:
    """A two-way mapping between farmhand tool names and provider-safe names.

    Names that are already safe map to themselves, so the common case changes nothing on
    the wire. Names that are not get `sanitize`d; a stand-in that would be too long or
    would clash with another name gets a short hash of the original name as its suffix.
    """

    def __init__(self, names: Iterable[str] = ()) -> None:
        self._to: dict[str, str] = {}
        self._from: dict[str, str] = {}
        unique = list(dict.fromkeys(names))
        # Safe names first: they keep themselves, whatever order the tools came in.
        for name in unique:
            if is_safe(name):
                self._bind(name, name)
        for name in unique:
            if name not in self._to:
                self._bind(name, self._invent(name))

    @classmethod
    def for_turn(cls, messages: Sequence[Message], tools: Sequence[ToolDefinition]) -> ToolNameMap:
        """The names one model turn uses: its tools', and those of the calls in its history
        (a tool no longer offered keeps the stand-in it was called by)."""
        called = [call.name for message in messages for call in message.tool_calls]
        return cls([tool.name for tool in tools] + called)

    def _bind(self, name: str, safe: str) -> None:
        self._to[name] = safe
        self._from[safe] = name

    def _invent(self, name: str) -> str:
        candidate = sanitize(name)
        if candidate and len(candidate) <= MAX_LENGTH and candidate not in self._from:
            return candidate
        digits = _HASH_LENGTH
        while True:
            candidate = _hashed(name, sanitize(name), digits)
            if candidate not in self._from:
                return candidate
            digits += 4  # a clash of 8 hex digits: practically never, but stay correct

    def to_provider(self, name: str) -> str:
        """The safe name for `name`; names not in the map still get a safe, stable form."""
        if name in self._to:
            return self._to[name]
        if is_safe(name):
            return name
        candidate = sanitize(name)
        if candidate and len(candidate) <= MAX_LENGTH:
            return candidate
        return _hashed(name, candidate, _HASH_LENGTH)

    def from_provider(self, safe: str) -> str:
        """The farmhand name behind `safe`; unknown names pass through unchanged."""
        return self._from.get(safe, safe)

    def __contains__(self, name: object) -> bool:
        return name in self._to

    def __len__(self) -> int:
        return len(self._to)
