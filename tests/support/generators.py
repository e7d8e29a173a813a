"""Async generators their reader left open, which asyncio then closes itself.

asyncio closes such a generator from its finalizer hook by starting a task for its
`aclose()`: a task, a loop iteration and an exception through the generator, per request
when it happens on a hot path. `left_to_asyncio()` records the ones that reach the hook."""

from __future__ import annotations

import gc
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from types import AsyncGeneratorType


@contextmanager
def left_to_asyncio() -> Iterator[list[str]]:
    """The qualified names of the async generators first iterated inside this block and
    later closed by asyncio rather than by their reader (checked on leaving the block)."""
    firstiter, finalizer = sys.get_asyncgen_hooks()
    left: list[str] = []

    def note(generator: AsyncGeneratorType[object, object]) -> None:
        left.append(generator.__qualname__)
        if finalizer is not None:
            finalizer(generator)

    sys.set_asyncgen_hooks(firstiter=firstiter, finalizer=note)
    try:
        yield left
        gc.collect()  # a generator in a reference cycle reaches the hook only now
    finally:
        sys.set_asyncgen_hooks(firstiter=firstiter, finalizer=finalizer)
