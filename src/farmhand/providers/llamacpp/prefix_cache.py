"""The KV state of a prompt's unchanging head, kept on disk between runs.

Every `farmhand chat --tools DIR` starts with the same system prompt and tool definitions:
thousands of tokens llama.cpp would process again in every new process. After the first
run the KV cache of that head is saved (llama.cpp's own sequence-state file); the next run
restores it and processes only what follows, the question.

The head is the prompt up to the first message that is not a system message (`head_of`).
A file is keyed by the model file (path, size, mtime), the context size, the llama-cpp-python
version and the head's tokens themselves, which are the chat template rendered with that
system prompt and those tools: change any of them and the key changes. Files live in
`$FARMHAND_HOME/kv/`, are written to a temporary name and renamed (a reader never sees half
a file), and only the newest `MAX_FILES` are kept. Anything that goes wrong with a file
costs only the time it would have saved: the prompt is then processed as usual.
"""

from __future__ import annotations

import ctypes
import hashlib
import logging
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from farmhand.paths import kv_cache_dir

log = logging.getLogger(__name__)

MAX_FILES = 16
MIN_TOKENS = 64  # below this a head is cheaper to process than to load
SUFFIX = ".kv"
SEQUENCE = 0  # llama-cpp-python uses sequence 0 only

Outcome = Literal["restored", "saved", "held", "skipped"]


class PrefixCache:
    """Restores or saves the KV state of prompt heads for one loaded `Llama`."""

    def __init__(self, llama: Any, directory: Path | None = None) -> None:
        self.llama = llama
        self.directory = directory or kv_cache_dir()
        self.evaluated = 0  # head tokens processed (not restored), summed
        self._model_key = _model_identity(llama)

    def prepare(self, head: Sequence[int]) -> Outcome:
        """Make the context hold `head` (from disk if it can), saving it if no file has it.

        "held": the context already holds it (a later round of the same run); "restored":
        loaded from disk; "saved": processed now and written for next time; "skipped": too
        short or not possible. Blocking: call it from a worker thread.
        """
        if len(head) < MIN_TOKENS or self._model_key is None:
            return "skipped"
        path = self.path_for(head)
        if _holds(self.llama, head):
            if path.exists():
                return "held"
            self.llama._ctx.kv_cache_seq_rm(-1, len(head), -1)
            self.llama.n_tokens = len(head)
            return "saved" if self._save(path, head) else "skipped"
        if path.exists() and self._restore(path, head):
            return "restored"
        self.llama.reset()
        self.llama.eval(list(head))
        self.evaluated += len(head)
        return "saved" if self._save(path, head) else "skipped"

    def path_for(self, head: Sequence[int]) -> Path:
        digest = hashlib.sha256(self._model_key or b"")
        digest.update(bytes(memoryview((ctypes.c_int32 * len(head))(*head))))
        stem = Path(str(getattr(self.llama, "model_path", "model"))).stem[:40]
        return self.directory / f"{stem}-{digest.hexdigest()[:24]}{SUFFIX}"

    def _restore(self, path: Path, head: Sequence[int]) -> bool:
        llama = self.llama
        llama.reset()
        llama._ctx.kv_cache_seq_rm(-1, 0, -1)
        if not load_sequence(llama.ctx, path, SEQUENCE, head):
            return False
        llama.input_ids[: len(head)] = head
        llama.n_tokens = len(head)
        return True

    def _save(self, path: Path, head: Sequence[int]) -> bool:
        return save_sequence(self.llama.ctx, path, SEQUENCE, head)


def load_sequence(ctx: Any, path: Path, seq_id: int, head: Sequence[int]) -> bool:
    """Load the head's KV state saved at `path` into sequence `seq_id` of the llama context
    `ctx` (empty); False, the file deleted and the sequence left empty, when it does not
    hold exactly `head`."""
    import llama_cpp

    capacity = len(head) + 1
    tokens = (llama_cpp.llama_token * capacity)()
    count = ctypes.c_size_t(0)
    read = llama_cpp.llama_state_seq_load_file(
        ctx, str(path).encode(), seq_id, tokens, capacity, ctypes.byref(count)
    )
    if not read or list(tokens[: count.value]) != list(head):
        log.warning("KV prefix file %s could not be used; processing the prompt", path)
        llama_cpp.llama_memory_seq_rm(llama_cpp.llama_get_memory(ctx), seq_id, 0, -1)
        path.unlink(missing_ok=True)
        return False
    os.utime(path)  # recently used: pruned last
    return True


def save_sequence(ctx: Any, path: Path, seq_id: int, head: Sequence[int]) -> bool:
    """Write sequence `seq_id` of `ctx` (which holds exactly `head`) to `path`, atomically,
    and prune the folder."""
    import llama_cpp

    directory = path.parent
    try:
        directory.mkdir(parents=True, exist_ok=True)
        fd, temp = tempfile.mkstemp(prefix=".kv-", suffix=".tmp", dir=directory)
        os.close(fd)
        tokens = (llama_cpp.llama_token * len(head))(*head)
        written = llama_cpp.llama_state_seq_save_file(ctx, temp.encode(), seq_id, tokens, len(head))
        if not written:
            Path(temp).unlink(missing_ok=True)
            return False
        os.replace(temp, path)
    except OSError as exc:
        log.warning("could not save the KV prefix to %s: %s", directory, exc)
        return False
    prune(directory)
    return True


def head_length(prompt_tokens: Sequence[int], head_tokens: Sequence[int]) -> int:
    """How many leading tokens the prompt shares with its head tokenized alone (text that
    tokenizes differently across the boundary is left to the prompt)."""
    same = 0
    for a, b in zip(prompt_tokens, head_tokens, strict=False):
        if a != b:
            break
        same += 1
    return same


def _holds(llama: Any, head: Sequence[int]) -> bool:
    if llama.n_tokens < len(head):
        return False
    return bool((llama.input_ids[: len(head)] == list(head)).all())


def _model_identity(llama: Any) -> bytes | None:
    try:
        import llama_cpp

        path = Path(str(llama.model_path)).resolve()
        stat = path.stat()
        version = getattr(llama_cpp, "__version__", "")
    except (AttributeError, OSError, ImportError):
        return None
    # A batched context (n_parallel sequences in one KV cache) keeps its own files: its
    # n_ctx is the sum of its sequences', and a single context of that size is not it.
    sequences = getattr(getattr(llama, "context_params", None), "n_seq_max", 1)
    parts = (str(path), stat.st_size, stat.st_mtime_ns, llama.n_ctx(), sequences, version)
    return "\0".join(map(str, parts)).encode()


def prune(directory: Path) -> None:
    """Keep the `MAX_FILES` most recently used state files."""
    try:
        files = sorted(directory.glob(f"*{SUFFIX}"), key=lambda p: p.stat().st_mtime)
        for old in files[:-MAX_FILES]:
            old.unlink(missing_ok=True)
    except OSError:
        pass  # another process pruned first
