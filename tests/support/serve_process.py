"""`farmhand serve` as a real subprocess, for tests that talk to it over HTTP."""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

READY = "Application startup complete"


class Served:
    def __init__(self, process: subprocess.Popen[str], lines: queue.Queue[str | None]) -> None:
        self.process = process
        self.lines = lines

    def stop(self) -> str:
        """SIGTERM, then the rest of the log once the process has exited."""
        self.process.send_signal(signal.SIGTERM)
        self.process.wait(timeout=60)
        rest: list[str] = []
        while (line := self.lines.get(timeout=10)) is not None:
            rest.append(line)
        return "".join(rest)


@contextmanager
def serving(*args: str, cwd: Path, env: dict[str, str]) -> Iterator[Served]:
    """`farmhand serve ARGS`, once uvicorn says the app has started (read from its log)."""
    process = subprocess.Popen(
        [sys.executable, "-m", "farmhand", "serve", *args],
        cwd=cwd,
        env={**os.environ, **env},
        stderr=subprocess.PIPE,
        text=True,
    )
    lines: queue.Queue[str | None] = queue.Queue()

    def read() -> None:
        assert process.stderr is not None
        for line in process.stderr:
            lines.put(line)
        lines.put(None)

    threading.Thread(target=read, daemon=True).start()
    seen: list[str] = []
    try:
        while True:
            line = lines.get(timeout=60)
            if line is None:
                raise AssertionError(f"farmhand serve exited early:\n{''.join(seen)}")
            seen.append(line)
            if READY in line:
                break
        yield Served(process, lines)
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            process.wait(timeout=60)
