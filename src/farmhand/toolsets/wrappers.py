"""Cross-cutting toolset behaviour, as small wrappers around any Toolset."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any

from farmhand.tools.definition import SEPARATOR, ToolDefinition
from farmhand.toolsets.base import ToolOutput, Toolset
from farmhand.toolsets.saved_results import ResultArchive


class PrefixedToolset:
    """Exposes every tool as `prefix:tool`, so tools of different servers cannot collide."""

    def __init__(self, inner: Toolset, prefix: str) -> None:
        self.inner = inner
        self.prefix = prefix

    async def list_tools(self) -> list[ToolDefinition]:
        return [
            dataclasses.replace(t, name=f"{self.prefix}{SEPARATOR}{t.name}")
            for t in await self.inner.list_tools()
        ]

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> ToolOutput:
        return await self.inner.call_tool(name.removeprefix(self.prefix + SEPARATOR), arguments)


PATH_KEYS = ("path", "paths", "source", "destination")


class WorkingDirPaths:
    """Reads relative path arguments as relative to the user's working directory.

    A user who asks about "./examples" means the folder beside them, but a filesystem
    server resolves relative paths against its own allowed root.
    """

    def __init__(self, inner: Toolset, base_dir: Path, keys: tuple[str, ...] = PATH_KEYS) -> None:
        self.inner = inner
        self.base_dir = base_dir
        self.keys = keys

    async def list_tools(self) -> list[ToolDefinition]:
        return await self.inner.list_tools()

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> ToolOutput:
        fixed = {k: self._absolute(v) if k in self.keys else v for k, v in arguments.items()}
        return await self.inner.call_tool(name, fixed)

    def _absolute(self, value: Any) -> Any:
        if isinstance(value, list):
            return [self._absolute(v) for v in value]
        if isinstance(value, str) and value and not Path(value).expanduser().is_absolute():
            return str((self.base_dir / value).resolve())
        return value


class FilteredToolset:
    """Only the tools `allow` accepts are listed, and only those can be called."""

    def __init__(self, inner: Toolset, allow: Callable[[ToolDefinition], bool], why: str) -> None:
        self.inner = inner
        self.allow = allow
        self.why = why
        self._allowed: set[str] | None = None

    async def list_tools(self) -> list[ToolDefinition]:
        tools = [t for t in await self.inner.list_tools() if self.allow(t)]
        self._allowed = {t.name for t in tools}
        return tools

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> ToolOutput:
        if self._allowed is None:
            await self.list_tools()
        if self._allowed is not None and name not in self._allowed:
            return ToolOutput(f"{name} is not enabled here: {self.why}", is_error=True)
        return await self.inner.call_tool(name, arguments)


def read_only_current(tool: ToolDefinition) -> bool:
    """Read-only tools, less those whose own description says they are deprecated (their
    replacement is listed too, and small models pick the first of two near-twins)."""
    return tool.read_only and "DEPRECATED" not in tool.description.upper()


DEFAULT_MAX_RESULT_CHARS = 20_000


class CappedResults:
    """Cuts results longer than `max_chars` to their head and tail, with a marker in the
    middle saying how much was cut and where the full text was saved (`archive`).

    A small model's context cannot hold a 2 MB directory tree, and the start (headers,
    first entries) and the end (totals, the error at the bottom) carry most of the value.
    The whole output stays in `ToolOutput.full_text`, so the caller still gets it.
    """

    def __init__(
        self,
        inner: Toolset,
        max_chars: int = DEFAULT_MAX_RESULT_CHARS,
        archive: ResultArchive | None = None,
    ) -> None:
        self.inner = inner
        self.max_chars = max_chars
        self.archive = archive or ResultArchive()

    async def list_tools(self) -> list[ToolDefinition]:
        return await self.inner.list_tools()

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> ToolOutput:
        output = await self.inner.call_tool(name, arguments)
        full = output.full_text if output.full_text is not None else output.text
        if len(output.text) <= self.max_chars:
            return output
        saved = self.archive.save(name, full)
        return dataclasses.replace(
            output, text=cut_middle(output.text, self.max_chars, saved.where()), full_text=full
        )


def cut_middle(text: str, max_chars: int, where: str) -> str:
    """`text` as its head and tail around a marker that says how much was cut and `where`
    the full text is, `max_chars` long at most (the marker included, unless max_chars is
    too small to hold it)."""
    marker = f"\n\n[... {{cut}} of {len(text)} characters cut here; {where} ...]\n\n"
    keep = max(max_chars - len(marker.format(cut=len(text))), 0)
    head = keep * 2 // 3  # the head usually matters more: headings, first entries
    tail = keep - head
    cut = len(text) - head - tail
    return text[:head] + marker.format(cut=cut) + (text[len(text) - tail :] if tail else "")
