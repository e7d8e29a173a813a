"""Loading a GGUF into llama-cpp-python, and giving its memory back when a load fails or
a model is closed."""

from __future__ import annotations

import ctypes
import gc
import logging
import os
from pathlib import Path
from typing import Any

from farmhand.errors import ModelError

log = logging.getLogger(__name__)

DEFAULT_N_CTX = 4096


def load_llama(
    model_path: Path, *, n_ctx: int = DEFAULT_N_CTX, n_threads: int | None = None
) -> Any:
    """Load a GGUF; n_threads defaults to every core (llama-cpp-python's default is half).
    A load that fails frees what it had taken (`free_failed_load`)."""
    try:
        from llama_cpp import Llama
    except ImportError as exc:
        raise ModelError(
            "llama-cpp-python is not installed; run `make setup` (it builds the embedded engine)"
        ) from exc
    if not model_path.is_file():
        raise ModelError(f"model file not found: {model_path}")
    # Built in two steps so that a constructor that fails half way (weights loaded, no
    # context) can still be closed here: otherwise the weights stay until the garbage
    # collector finds the half-built object through the exception's traceback.
    llama = Llama.__new__(Llama)
    try:
        Llama.__init__(
            llama,
            str(model_path),
            n_ctx=n_ctx,
            n_threads=n_threads or os.cpu_count() or 1,
            n_threads_batch=n_threads or os.cpu_count() or 1,
            verbose=False,
        )
    except (ValueError, RuntimeError) as exc:
        reason = str(exc)
        free_failed_load(llama)
        raise ModelError(
            f"could not load {model_path} with n_ctx {n_ctx}: {reason} (is it a valid GGUF"
            " file, and does the context fit in memory?)"
        ) from None
    return llama


def free_failed_load(llama: Any) -> None:
    """Release what a half-built `Llama` holds, and hand the freed heap back to the system."""
    stack = getattr(llama, "_stack", None)
    if stack is not None:
        try:
            stack.close()
        except Exception:  # what is left of it is freed with the object
            log.debug("closing a half-loaded model failed", exc_info=True)
    gc.collect()
    return_freed_memory()


def return_freed_memory() -> None:
    """glibc keeps freed heap pages for reuse; a freed model's hundreds of MiB go back to
    the system only when asked (malloc_trim)."""
    try:
        libc = ctypes.CDLL("libc.so.6")
    except OSError:
        return
    libc.malloc_trim(0)
