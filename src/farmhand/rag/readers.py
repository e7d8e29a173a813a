"""What `farmhand rag add` reads: text, Markdown and code files (any UTF-8 text), and PDF
files page by page. A folder is walked for them; what cannot be read is reported, not
fatal, so one broken file does not stop an index of a thousand."""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from farmhand.errors import RequestError

MAX_FILE_BYTES = 20 * 1024 * 1024
"""Larger files are skipped: a log or a data dump, not a document."""
MAX_FILES = 20_000
"""Most files one `rag add` reads (a folder that holds more is likely the wrong one)."""
SKIPPED_DIRS = frozenset({"node_modules", "__pycache__", "venv", "site-packages", "dist", "build"})
"""Folders of generated or installed files; hidden folders (.git, .venv) are skipped too."""
_SNIFF_BYTES = 8192


@dataclass(frozen=True)
class Page:
    """Text of a document, or of one page of a PDF (`page` counts from 1)."""

    text: str
    page: int | None = None


@dataclass(frozen=True)
class Document:
    path: Path
    kind: str  # "pdf", "markdown" or "text"
    pages: tuple[Page, ...]


@dataclass(frozen=True)
class Skipped:
    path: Path
    reason: str


def find_files(paths: Sequence[Path]) -> Iterator[Path]:
    """The files `paths` name: files as given, folders walked (hidden and generated folders
    skipped), in a stable order. RequestError for a path that does not exist."""
    count = 0
    for root in paths:
        if not root.exists():
            raise RequestError(f"{root} does not exist; name a file or a folder of documents")
        files = [root] if root.is_file() else _walk(root)
        for path in files:
            count += 1
            if count > MAX_FILES:
                raise RequestError(
                    f"more than {MAX_FILES} files under {', '.join(map(str, paths))}; name a"
                    " smaller folder"
                )
            yield path


def _walk(folder: Path) -> Iterator[Path]:
    for here, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in SKIPPED_DIRS)
        for name in sorted(files):
            if not name.startswith("."):
                yield Path(here) / name


def read_document(path: Path) -> Document | Skipped:
    """The file's text, or why it was skipped (binary, not UTF-8, too large, a broken PDF)."""
    try:
        size = path.stat().st_size
    except OSError as exc:
        return Skipped(path, f"cannot read it: {exc.strerror or exc}")
    if size > MAX_FILE_BYTES:
        return Skipped(path, f"{size} bytes, more than {MAX_FILE_BYTES}")
    if path.suffix.lower() == ".pdf":
        return _read_pdf(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        return Skipped(path, f"cannot read it: {exc.strerror or exc}")
    if b"\0" in data[:_SNIFF_BYTES]:
        return Skipped(path, "a binary file")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return Skipped(path, "not UTF-8 text")
    kind = "markdown" if path.suffix.lower() in (".md", ".markdown", ".mdx", ".rst") else "text"
    return Document(path, kind, (Page(text),))


def _read_pdf(path: Path) -> Document | Skipped:
    import logging

    from pypdf import PdfReader
    from pypdf.errors import PyPdfError

    logging.getLogger("pypdf").setLevel(logging.ERROR)  # it warns about every odd object
    try:
        reader = PdfReader(path)
        if reader.is_encrypted:
            return Skipped(path, "an encrypted PDF")
        pages = tuple(
            Page(page.extract_text() or "", number)
            for number, page in enumerate(reader.pages, start=1)
        )
    except (PyPdfError, OSError, ValueError, KeyError, TypeError) as exc:
        return Skipped(path, f"not a readable PDF: {exc}")
    if not any(p.text.strip() for p in pages):
        return Skipped(path, "a PDF without text (scanned pages need OCR first)")
    return Document(path, "pdf", pages)
