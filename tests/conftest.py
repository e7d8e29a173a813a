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
    """Runs the real `farmhand` command in a subprocess: `farmhand_cli(*args, cwd=...)`."""

    def run(*args: str, cwd: Path, timeout: float = 600) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "farmhand", *args],
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=timeout,
        )

    return run
