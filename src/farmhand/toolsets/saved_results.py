"""The full text of cut tool results, kept on disk for the user, within a size cap and an
age (`runtime.saved_results`).

Every result longer than `max_tool_result_chars` is saved, and any tool a client can call
can return long results, so the folder would otherwise grow for ever. Before each save,
files older than the age are removed, then the oldest ones until the new file fits; a
result larger than the whole cap is not saved at all (the cut result says why). Only the
`.txt` files this module writes are counted and removed.
"""

from __future__ import annotations

import hashlib
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from farmhand.config.limits import SavedResultsConfig
from farmhand.paths import farmhand_home

DAY = 24 * 3600


def results_dir() -> Path:
    """Where the full text of cut tool results is kept for the user to read."""
    return farmhand_home() / "results"


@dataclass(frozen=True)
class Saved:
    """Where a result was saved, or why it was not."""

    path: Path | None
    reason: str = "it could not be written"

    def where(self) -> str:
        if self.path is not None:
            return f"the full text is in {self.path}"
        return f"the full text could not be saved: {self.reason}"


class ResultArchive:
    """Saves full results under `directory()` within `limits`."""

    def __init__(
        self,
        directory: Callable[[], Path] = results_dir,
        limits: SavedResultsConfig | None = None,
    ) -> None:
        self.directory = directory
        self.limits = limits or SavedResultsConfig()

    def save(self, name: str, text: str) -> Saved:
        data = text.encode()
        if len(data) > self.limits.max_bytes:
            return Saved(
                None,
                f"{len(data)} bytes is more than runtime.saved_results.max_bytes"
                f" ({self.limits.max_bytes})",
            )
        directory = self.directory()
        digest = hashlib.sha256(data).hexdigest()[:10]
        safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", name)[:80]
        path = directory / f"{time.strftime('%Y%m%d-%H%M%S')}-{safe}-{digest}.txt"
        try:
            directory.mkdir(parents=True, exist_ok=True)
            self.make_room(directory, len(data))
            path.write_bytes(data)
        except OSError as exc:  # a full disk must not fail the call
            return Saved(None, exc.strerror or type(exc).__name__)
        return Saved(path)

    def make_room(self, directory: Path, incoming: int) -> None:
        """Remove saved results past their age, then the oldest until `incoming` more
        bytes fit under the cap."""
        oldest_kept = time.time() - self.limits.max_age_days * DAY
        kept: list[tuple[float, int, Path]] = []
        for path in directory.glob("*.txt"):
            try:
                status = path.stat()
                if status.st_mtime < oldest_kept:
                    path.unlink()
                else:
                    kept.append((status.st_mtime, status.st_size, path))
            except FileNotFoundError:  # removed meanwhile (another farmhand)
                continue
        total = sum(size for _, size, _ in kept)
        for _, size, path in sorted(kept):
            if total + incoming <= self.limits.max_bytes:
                break
            path.unlink(missing_ok=True)
            total -= size
