"""The saved full text of cut results stays within runtime.saved_results: a size cap (oldest
files go first) and an age; a result larger than the cap is not saved, and says why."""

from __future__ import annotations

import os
import time
from pathlib import Path

from farmhand.config.limits import SavedResultsConfig
from farmhand.toolsets.saved_results import DAY, ResultArchive


def aged(path: Path, days: float) -> None:
    then = time.time() - days * DAY
    os.utime(path, (then, then))


def test_the_oldest_results_make_room_for_a_new_one(tmp_path: Path) -> None:
    archive = ResultArchive(lambda: tmp_path, SavedResultsConfig(max_bytes=2500))
    first = archive.save("a", "1" * 1000).path
    second = archive.save("b", "2" * 1000).path
    assert first is not None and second is not None
    aged(first, 0.2)  # older than the second
    third = archive.save("c", "3" * 1000).path
    assert third is not None
    assert sorted(tmp_path.iterdir()) == sorted([second, third])
    assert sum(p.stat().st_size for p in tmp_path.iterdir()) <= 2500


def test_results_past_their_age_are_removed(tmp_path: Path) -> None:
    archive = ResultArchive(lambda: tmp_path, SavedResultsConfig(max_age_days=2))
    old = archive.save("old", "old text").path
    recent = archive.save("recent", "recent text").path
    other = tmp_path / "notes.md"  # not ours: never counted or removed
    other.write_text("x")
    assert old is not None and recent is not None
    aged(old, 3)
    aged(other, 30)
    archive.save("new", "new text")
    assert not old.exists() and recent.exists() and other.exists()


def test_a_result_larger_than_the_cap_is_not_saved_and_says_why(tmp_path: Path) -> None:
    archive = ResultArchive(lambda: tmp_path, SavedResultsConfig(max_bytes=100))
    kept = archive.save("small", "s" * 50).path
    saved = archive.save("big", "é" * 60)  # 120 bytes
    assert saved.path is None and kept is not None and kept.exists()
    assert saved.where() == (
        "the full text could not be saved: 120 bytes is more than"
        " runtime.saved_results.max_bytes (100)"
    )
