"""Servers the engine benches start: `farmhand serve` and llama-server on one GGUF, each a
subprocess on a free loopback port, stopped when the block ends (concurrency.py,
long_prompt_ttft.py)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from farmhand.llamaserver.process import child_environment, find_llama_server


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def wait_ready(url: str, process: subprocess.Popen[bytes], seconds: float = 300) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"the server exited with {process.returncode} while starting")
        try:
            if httpx.get(url, timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    raise SystemExit(f"{url} was not ready after {seconds:.0f} s")


@contextmanager
def running(command: list[str], health: str, env: dict[str, str], cwd: Path) -> Iterator[None]:
    """`command` running (its output in cwd/server.log) until the block ends."""
    log = open(cwd / "server.log", "ab")  # noqa: SIM115 - closed below
    process = subprocess.Popen(command, env=env, cwd=cwd, stdout=log, stderr=log)
    try:
        wait_ready(health, process)
        yield
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()


@contextmanager
def farmhand_serving(
    gguf: Path, work: Path, *, n_ctx: int, n_parallel: int | None = None, max_queue: int = 64
) -> Iterator[int]:
    """`farmhand serve` with one model named "bench" on `gguf`; yields its port."""
    port = free_port()
    (work / "farmhand.yaml").write_text(
        f"server:\n  engine:\n    max_queue: {max_queue}\nruntime:\n  models:\n"
        f"    - name: bench\n      model_path: {gguf}\n      n_ctx: {n_ctx}\n"
        + (f"      n_parallel: {n_parallel}\n" if n_parallel else "")
    )
    env = {**os.environ, "FARMHAND_API_KEYS": ""}
    command = [sys.executable, "-m", "farmhand", "serve", "--port", str(port)]
    with running(command, f"http://127.0.0.1:{port}/health", env, work):
        yield port


@contextmanager
def llama_server_serving(gguf: Path, work: Path, *, n_ctx: int, n_parallel: int) -> Iterator[int]:
    """llama-server (the set-up's build, `--jinja -np N`, `n_ctx` per slot) on `gguf`."""
    binary = find_llama_server()
    env = {**os.environ, **child_environment(binary)}
    port = free_port()
    command = [
        str(binary),
        "-m", str(gguf),
        "--jinja",
        "-np", str(n_parallel),
        "-c", str(n_ctx * n_parallel),
        "-t", str(os.cpu_count() or 1),
        "--host", "127.0.0.1",
        "--port", str(port),
    ]  # fmt: skip
    with running(command, f"http://127.0.0.1:{port}/health", env, work):
        yield port
