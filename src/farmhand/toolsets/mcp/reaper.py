"""Runs one stdio MCP server so that nothing it starts outlives farmhand (Linux).

    python -I -S reaper.py -- COMMAND [ARGS...]

farmhand starts this script instead of the server. It asks the kernel for SIGTERM when
farmhand dies (PR_SET_PDEATHSIG, which also fires on SIGKILL) and to become the parent of
every orphan below it (PR_SET_CHILD_SUBREAPER, so a grandchild that detaches still reports
here). It then forks the server with the same stdin, stdout and stderr, and when the server
exits, or farmhand dies, or it is told to stop, it kills every process still below it.

Standalone on purpose: it imports only the standard library, so it starts in milliseconds
and is run by path, outside farmhand's package.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
from pathlib import Path
from typing import NoReturn

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


def main(argv: list[str]) -> int:
    command = argv[1:] if argv[:1] == ["--"] else argv
    if not command:
        print("usage: reaper.py -- COMMAND [ARGS...]", file=sys.stderr)
        return 2
    parent = os.getppid()
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    if os.getppid() != parent:  # farmhand died before the request took effect
        return 1
    server = os.fork()
    if server == 0:
        try:
            os.execvp(command[0], command)
        except OSError as exc:
            print(f"cannot run {command[0]}: {exc.strerror}", file=sys.stderr)
        os._exit(127)
    for sig in STOP_SIGNALS:
        signal.signal(sig, lambda number, _frame: _stop(128 + number))
    return _stop(_wait_for(server))


def _wait_for(server: int) -> int:
    """The server's exit code; orphans adopted meanwhile are reaped as they end."""
    while True:
        pid, status = os.waitpid(-1, 0)
        if pid == server:
            return os.waitstatus_to_exitcode(status) % 256


def _stop(code: int) -> NoReturn:
    for _ in range(5):  # a process may fork while its siblings are killed
        below = _descendants(os.getpid())
        if not below:
            break
        for pid in below:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        _reap()
    os._exit(code)


def _reap() -> None:
    with contextlib.suppress(ChildProcessError):
        while os.waitpid(-1, os.WNOHANG)[0] > 0:
            pass


def _descendants(root: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if fields[0] == "Z":  # already dead, waiting to be reaped
            continue
        children.setdefault(int(fields[1]), []).append(int(entry.name))
    found: list[int] = []
    todo = [root]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
