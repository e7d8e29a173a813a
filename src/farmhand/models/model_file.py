"""A model file written where it is used without a half-written one ever being there."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def written_in_place(dest: Path) -> Iterator[Path]:
    """A temp file beside `dest` for the block to write; when the block ends it is renamed
    to `dest` (readable by all: a model file is not a secret), so `dest` is either absent or
    complete. On any failure, Ctrl-C included, the temp file is removed."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(prefix=f".{dest.name}.", suffix=".tmp", dir=dest.parent)
    os.close(fd)
    tmp = Path(name)
    try:
        yield tmp
        os.chmod(tmp, 0o644)  # mkstemp makes it 0600
        os.replace(tmp, dest)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
