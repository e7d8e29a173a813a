import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def farmhand_cli() -> Callable[..., subprocess.CompletedProcess[str]]:
    """Runs the real `farmhand` command in a subprocess: `farmhand_cli(*args, cwd=...)`;
    `input=` is piped to its stdin, `env=` adds environment variables."""

    def run(
        *args: str,
        cwd: Path,
        timeout: float = 600,
        input: str | None = None,
        env: dict[str, str] | None = None,
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "farmhand", *args],
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=timeout,
            input=input,
            env={**os.environ, **env} if env else None,
        )

    return run
