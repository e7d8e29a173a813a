"""The real `farmhand` command with its stdin and stderr on a pseudo-terminal, as a person at
a terminal runs it: a test waits for a prompt on the terminal and types the answer.

stdout stays a pipe (what the command prints as its answer); stderr, where questions are
asked, shares the terminal with stdin.
"""

from __future__ import annotations

import os
import pty
import re
import select
import subprocess
import sys
import time
from pathlib import Path
from types import TracebackType

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


class Terminal:
    def __init__(self, *args: str, cwd: Path, env: dict[str, str] | None = None) -> None:
        self.master, slave = pty.openpty()
        self.process = subprocess.Popen(
            [sys.executable, "-m", "farmhand", *args],
            cwd=cwd,
            stdin=slave,
            stdout=subprocess.PIPE,
            stderr=slave,
            env={**os.environ, "NO_COLOR": "1", "TERM": "dumb", "COLUMNS": "200", **(env or {})},
            start_new_session=True,
        )
        os.close(slave)
        self.screen = ""  # everything shown on the terminal so far, without colour codes
        self._seen = 0

    def expect(self, text: str, timeout: float = 60.0) -> str:
        """Wait until `text` appears after what was expected before; what came until it."""
        deadline = time.monotonic() + timeout
        while (found := self.screen.find(text, self._seen)) < 0:
            left = deadline - time.monotonic()
            if left <= 0 or (self.process.poll() is not None and not self._read(0.1)):
                raise AssertionError(f"{text!r} never appeared; the terminal shows:\n{self.screen}")
            self._read(min(left, 0.5))
        shown = self.screen[self._seen : found + len(text)]
        self._seen = found + len(text)
        return shown

    def type(self, line: str) -> None:
        os.write(self.master, (line + "\n").encode())

    def finish(self, timeout: float = 60.0) -> tuple[int, str]:
        """Wait for the command to exit; its exit code and stdout."""
        stdout, _ = self.process.communicate(timeout=timeout)
        while self._read(0.1):
            pass
        return self.process.returncode, stdout.decode()

    def _read(self, timeout: float) -> bool:
        ready, _, _ = select.select([self.master], [], [], timeout)
        if not ready:
            return False
        try:
            data = os.read(self.master, 65536)
        except OSError:  # the other side closed
            return False
        self.screen += ANSI.sub("", data.decode(errors="replace")).replace("\r\n", "\n")
        return bool(data)

    def __enter__(self) -> Terminal:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        os.close(self.master)
