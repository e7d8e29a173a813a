"""Start a stdio MCP server, keeping its stderr so a failure can say why."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import TextIO

from farmhand.errors import ToolServerError


class StderrLog:
    """A server's stderr, in a temp file (a subprocess needs a real file descriptor)."""

    def __init__(self) -> None:
        # Closed by close(), when the server's toolset closes.
        self.file: TextIO = tempfile.TemporaryFile(  # noqa: SIM115
            "w+", encoding="utf-8", errors="replace"
        )

    def tail(self, lines: int = 10) -> str:
        self.file.flush()
        self.file.seek(0)
        text = self.file.read()
        self.file.seek(0, 2)
        return "\n".join(text.strip().splitlines()[-lines:])

    def close(self) -> None:
        self.file.close()


def resolve_command(command: str) -> str:
    """The command's full path; a missing one is an error that says how to fix it."""
    if Path(command).is_absolute() or "/" in command:
        if not Path(command).exists():
            raise ToolServerError(f"MCP server command not found: {command}")
        return command
    found = shutil.which(command)
    if found is None:
        raise ToolServerError(
            f"MCP server command not found on PATH: {command!r}; install it or give its full path"
        )
    return found
