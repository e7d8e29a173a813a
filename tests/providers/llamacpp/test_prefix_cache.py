"""The KV prefix cache's bookkeeping without a model: where the head ends, which heads are
worth a file, and pruning. tests/e2e/test_prefix_cache.py saves and restores real KV state."""

from __future__ import annotations

import os
from pathlib import Path
from types import SimpleNamespace

from farmhand.providers.llamacpp import prefix_cache
from farmhand.providers.llamacpp.prefix_cache import MIN_TOKENS, PrefixCache, head_length


def test_head_length_is_the_shared_prefix() -> None:
    assert head_length([1, 2, 3, 4], [1, 2, 3]) == 3
    assert head_length([1, 2, 9, 4], [1, 2, 3]) == 2  # the boundary tokenized differently
    assert head_length([1, 2], [1, 2, 3]) == 2
    assert head_length([], [1]) == 0


def test_short_heads_and_unknown_model_files_are_skipped(tmp_path: Path) -> None:
    model = tmp_path / "m.gguf"
    model.write_bytes(b"gguf")
    llama = SimpleNamespace(model_path=str(model), n_ctx=lambda: 4096)
    cache = PrefixCache(llama, tmp_path / "kv")
    assert cache.prepare(list(range(MIN_TOKENS - 1))) == "skipped"
    missing = PrefixCache(SimpleNamespace(model_path=str(tmp_path / "gone.gguf")), tmp_path)
    assert missing.prepare(list(range(MIN_TOKENS))) == "skipped"
    assert not (tmp_path / "kv").exists()


def test_file_names_follow_model_and_head(tmp_path: Path) -> None:
    model = tmp_path / "tiny.gguf"
    model.write_bytes(b"gguf")
    llama = SimpleNamespace(model_path=str(model), n_ctx=lambda: 4096)
    cache = PrefixCache(llama, tmp_path)
    a, b = cache.path_for([1, 2, 3]), cache.path_for([1, 2, 4])
    assert a != b and a == cache.path_for([1, 2, 3])
    assert a.name.startswith("tiny-") and a.suffix == ".kv"
    bigger = PrefixCache(SimpleNamespace(model_path=str(model), n_ctx=lambda: 8192), tmp_path)
    assert bigger.path_for([1, 2, 3]) != a  # another context size, another file


def test_prune_keeps_the_newest(tmp_path: Path) -> None:
    for i in range(prefix_cache.MAX_FILES + 3):
        path = tmp_path / f"m-{i:02d}.kv"
        path.write_bytes(b"x")
        os.utime(path, (1000 + i, 1000 + i))
    prefix_cache.prune(tmp_path)
    left = sorted(p.name for p in tmp_path.glob("*.kv"))
    assert len(left) == prefix_cache.MAX_FILES
    assert left[0] == "m-03.kv"
