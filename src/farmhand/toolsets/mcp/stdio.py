"""Start a stdio MCP server in its own process group, keeping its stderr so a failure can
say why, and leave nothing of it running after its session closes."""

from __future__ import annotations

import os
import shutil
import signal
import tempfile
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager, suppress
from pathlib import Path
from typing import Any, TextIO

from mcp.client.stdio import StdioServerParameters, stdio_client

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


@asynccontextmanager
async def process_group_stdio(
    params: StdioServerParameters, stderr: StderrLog
) -> AsyncIterator[Any]:
    """The SDK's stdio transport (which starts the server in a new session, so its own process
    group), and on close a kill of whatever is left in that group: the SDK signals the group
    only when the server itself outlives its grace period, so children of a server that exited
    or crashed would survive."""
    async with AsyncExitStack() as stack:
        groups: set[int] = set()
        stack.callback(_kill_groups, groups)  # runs last, after the SDK reaped the server
        streams = await stack.enter_async_context(stdio_client(params, errlog=stderr.file))
        groups.update(_children_writing_to(stderr))
        yield streams


def _kill_groups(groups: set[int]) -> None:
    for pgid in groups:
        with suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, signal.SIGKILL)


def _children_writing_to(stderr: StderrLog) -> set[int]:
    """Our child processes whose stderr is this log file: the server (a group leader, since the
    SDK starts it with start_new_session). Linux only; elsewhere the SDK's own kill applies."""
    try:
        wanted = os.fstat(stderr.file.fileno())
        found: set[int] = set()
        me = str(os.getpid())
        for entry in os.scandir("/proc"):
            if not entry.name.isdigit():
                continue
            with suppress(OSError):
                stat = Path(f"/proc/{entry.name}/stat").read_text()
                parent = stat.rsplit(")", 1)[1].split()[1]
                if parent != me:
                    continue
                fd = os.stat(f"/proc/{entry.name}/fd/2")
                pid = int(entry.name)
                same_file = (fd.st_dev, fd.st_ino) == (wanted.st_dev, wanted.st_ino)
                if same_file and os.getpgid(pid) == pid:
                    found.add(pid)
        return found
    except OSError:
        return set()
