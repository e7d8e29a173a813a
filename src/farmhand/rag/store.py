"""One collection on disk: a SQLite file holding the passages, an FTS5 index of their words
(BM25) and a sqlite-vec index of their embeddings, written in one transaction per document.

sqlite-vec rather than LanceDB: it is one 160 kB extension with no dependencies, and it
lives in the same SQLite file as the FTS5 keyword index, so a document's passages, words and
vectors are added or replaced together and a collection is a single file. It is loaded
through apsw, whose SQLite may load extensions (the interpreter's sqlite3 often may not).
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

import apsw
import sqlite_vec

from farmhand.errors import RequestError
from farmhand.rag.chunking import Passage

SCHEMA_VERSION = "1"
_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS documents (
    id INTEGER PRIMARY KEY,
    source TEXT NOT NULL UNIQUE,
    label TEXT NOT NULL,
    kind TEXT NOT NULL,
    digest TEXT NOT NULL,
    added REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS passages (
    id INTEGER PRIMARY KEY,
    document INTEGER NOT NULL REFERENCES documents(id),
    position INTEGER NOT NULL,
    start_line INTEGER NOT NULL,
    end_line INTEGER NOT NULL,
    page INTEGER,
    text TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS passages_document ON passages(document);
CREATE VIRTUAL TABLE IF NOT EXISTS passage_words USING fts5(
    label, text, tokenize = 'unicode61 remove_diacritics 2'
);
"""
_WORD = re.compile(r"\w+(?:[.:/-]\w+)*")
"""A query's terms: words, and names like parse_config, os.path.join, v1.2, llama-server."""


def embedded_text(label: str, text: str) -> str:
    """What a passage's vector is made from: its file's name (a question may name it), then
    its text."""
    return f"{label}\n{text}"


@dataclass(frozen=True)
class StoredPassage:
    id: int
    source: str
    label: str
    passage: Passage


@dataclass(frozen=True)
class CollectionInfo:
    name: str
    embedder: str
    dimensions: int
    documents: int
    passages: int


class CollectionFile:
    """The SQLite file of one collection. Blocking: use it from a worker thread; calls are
    serialised by a lock, so one instance may be shared."""

    def __init__(self, path: Path, name: str) -> None:
        self.path, self.name = path, name
        try:
            self.db = apsw.Connection(str(path))
            self.db.enable_load_extension(True)
            self.db.load_extension(sqlite_vec.loadable_path())
            self.db.enable_load_extension(False)
            self.db.set_busy_timeout(10_000)
            with self.db:
                self.db.execute(_SCHEMA)
        except apsw.Error as exc:
            raise RequestError(f"cannot open collection {name!r} ({path}): {exc}") from None
        self._lock = threading.Lock()
        self._identity = _identity(path)

    def is_at(self, path: Path) -> bool:
        """Whether `path` is still the file this opened (not removed, not replaced)."""
        return self._identity is not None and _identity(path) == self._identity

    def __enter__(self) -> CollectionFile:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        self.db.close()

    # -- what the collection is ------------------------------------------------------------

    def meta(self, key: str) -> str | None:
        with self._lock:
            row = self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def claim(self, embedder: str, dimensions: int) -> None:
        """Fix the collection's embedder and vector size on first use; RequestError when
        it was built with another one (vectors of two models cannot be compared, so they
        are never mixed: the collection is re-indexed, or kept to its model)."""
        have, have_dimensions = self.meta("embedder"), self.meta("dimensions")
        if have is None:
            with self._lock, self.db:
                self._set_embedder(embedder, dimensions)
            return
        if have != embedder or have_dimensions != str(dimensions):
            raise RequestError(
                f"collection {self.name!r} was indexed with the embeddings of {have!r}"
                f" ({have_dimensions} dimensions), not {embedder!r} ({dimensions}); vectors of"
                " two models are never mixed. Re-index it: `farmhand rag add PATH"
                f" --collection {self.name} --reindex` embeds every passage again with"
                f" {embedder!r}; or keep its model: --model {have}"
            )

    def replace_embeddings(
        self, embedder: str, ids: Sequence[int], vectors: Sequence[Sequence[float]]
    ) -> None:
        """Every passage's vector replaced by another model's (`ids`: all the passages), in
        one transaction: the collection is then that model's."""
        dimensions = len(vectors[0]) if vectors else 0
        with self._lock, self.db:
            self.db.execute("DROP TABLE IF EXISTS passage_vectors")
            self.db.execute("DELETE FROM meta WHERE key IN ('embedder', 'dimensions')")
            if not vectors:
                return
            self._set_embedder(embedder, dimensions)
            for rowid, vector in zip(ids, vectors, strict=True):
                self.db.execute(
                    "INSERT INTO passage_vectors (rowid, embedding) VALUES (?,?)",
                    (rowid, sqlite_vec.serialize_float32(list(vector))),
                )

    def _set_embedder(self, embedder: str, dimensions: int) -> None:
        self.db.execute(
            "INSERT OR REPLACE INTO meta VALUES ('embedder', ?), ('dimensions', ?), ('schema', ?)",
            (embedder, str(dimensions), SCHEMA_VERSION),
        )
        self.db.execute(
            "CREATE VIRTUAL TABLE passage_vectors USING vec0("
            f"embedding float[{int(dimensions)}] distance_metric=cosine)"
        )

    def info(self) -> CollectionInfo:
        with self._lock:
            counts: Any = self.db.execute(
                "SELECT (SELECT count(*) FROM documents), (SELECT count(*) FROM passages)"
            ).fetchone()
        return CollectionInfo(
            self.name,
            self.meta("embedder") or "",
            int(self.meta("dimensions") or 0),
            int(counts[0]),
            int(counts[1]),
        )

    # -- writing ---------------------------------------------------------------------------

    def digest_of(self, source: str) -> str | None:
        with self._lock:
            row = self.db.execute(
                "SELECT digest FROM documents WHERE source = ?", (source,)
            ).fetchone()
        return None if row is None else str(row[0])

    def put_document(
        self,
        source: str,
        label: str,
        kind: str,
        digest: str,
        passages: Sequence[Passage],
        vectors: Sequence[Sequence[float]],
    ) -> None:
        """Add a document, or replace what the collection held of it, in one transaction."""
        with self._lock, self.db:
            self._remove(source)
            self.db.execute(
                "INSERT INTO documents (source, label, kind, digest, added) VALUES (?,?,?,?,?)",
                (source, label, kind, digest, time.time()),
            )
            document = self.db.last_insert_rowid()
            for position, (passage, vector) in enumerate(zip(passages, vectors, strict=True)):
                self.db.execute(
                    "INSERT INTO passages (document, position, start_line, end_line, page, text)"
                    " VALUES (?,?,?,?,?,?)",
                    (
                        document,
                        position,
                        passage.start_line,
                        passage.end_line,
                        passage.page,
                        passage.text,
                    ),
                )
                rowid = self.db.last_insert_rowid()
                self.db.execute(
                    "INSERT INTO passage_words (rowid, label, text) VALUES (?,?,?)",
                    (rowid, label, passage.text),
                )
                self.db.execute(
                    "INSERT INTO passage_vectors (rowid, embedding) VALUES (?,?)",
                    (rowid, sqlite_vec.serialize_float32(list(vector))),
                )

    def remove_document(self, source: str) -> bool:
        with self._lock, self.db:
            removed = self._remove(source)
        return removed

    def _remove(self, source: str) -> bool:
        row = self.db.execute("SELECT id FROM documents WHERE source = ?", (source,)).fetchone()
        if row is None:
            return False
        ids = [r[0] for r in self.db.execute("SELECT id FROM passages WHERE document = ?", row)]
        for rowid in ids:
            self.db.execute("DELETE FROM passage_words WHERE rowid = ?", (rowid,))
            self.db.execute("DELETE FROM passage_vectors WHERE rowid = ?", (rowid,))
        self.db.execute("DELETE FROM passages WHERE document = ?", row)
        self.db.execute("DELETE FROM documents WHERE id = ?", row)
        return True

    # -- searching -------------------------------------------------------------------------

    def keyword_ranking(self, query: str, limit: int) -> list[int]:
        """Passage ids by BM25 over their words and their file's name, best first: any
        term of the query may match, an identifier as the words it is made of, in order."""
        terms = dict.fromkeys(m.group(0) for m in _WORD.finditer(query))
        if not terms:
            return []
        expression = " OR ".join('"' + t.replace('"', '""') + '"' for t in terms)
        with self._lock:
            rows: list[Any] = self.db.execute(
                "SELECT rowid FROM passage_words WHERE passage_words MATCH ?"
                " ORDER BY bm25(passage_words, 0.5, 1.0) LIMIT ?",
                (expression, limit),
            ).fetchall()
        return [int(r[0]) for r in rows]

    def vector_ranking(self, vector: Sequence[float], limit: int) -> list[int]:
        """Passage ids by cosine distance of their embeddings to `vector`, nearest first."""
        dimensions = self.meta("dimensions")
        if dimensions is None:
            return []
        if len(vector) != int(dimensions):
            raise RequestError(
                f"collection {self.name!r} holds {dimensions}-dimension vectors of"
                f" {self.meta('embedder')!r}, and that model now gives {len(vector)}: its file"
                f" changed. Re-index it: `farmhand rag add PATH --collection {self.name}"
                " --reindex`"
            )
        with self._lock:
            rows: list[Any] = self.db.execute(
                "SELECT rowid FROM passage_vectors WHERE embedding MATCH ? AND k = ?"
                " ORDER BY distance",
                (sqlite_vec.serialize_float32(list(vector)), limit),
            ).fetchall()
        return [int(r[0]) for r in rows]

    def embedded_texts(self) -> tuple[list[int], list[str]]:
        """Every passage's id and the text its vector was made from (its file's label, then
        its text), in the order they were added."""
        with self._lock:
            rows: list[Any] = self.db.execute(
                "SELECT p.id, d.label, p.text FROM passages p"
                " JOIN documents d ON d.id = p.document ORDER BY p.id"
            ).fetchall()
        return [int(r[0]) for r in rows], [embedded_text(r[1], r[2]) for r in rows]

    def passages(self, ids: Sequence[int]) -> dict[int, StoredPassage]:
        if not ids:
            return {}
        marks = ",".join("?" * len(ids))
        with self._lock:
            rows: list[Any] = self.db.execute(
                "SELECT p.id, d.source, d.label, p.text, p.start_line, p.end_line, p.page"
                f" FROM passages p JOIN documents d ON d.id = p.document WHERE p.id IN ({marks})",
                tuple(ids),
            ).fetchall()
        return {
            int(r[0]): StoredPassage(int(r[0]), r[1], r[2], Passage(r[3], r[4], r[5], r[6]))
            for r in rows
        }


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        found = path.stat()
    except OSError:
        return None
    return found.st_dev, found.st_ino
