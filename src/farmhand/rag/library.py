"""The collections under one folder ($FARMHAND_HOME/rag): adding documents, and the hybrid
search that a question runs: BM25 over the words (exact names and identifiers) and cosine
distance over the embeddings (meaning), fused by reciprocal rank."""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Protocol

from farmhand.config.models import COLLECTION_NAME, check_collection_name
from farmhand.errors import RequestError
from farmhand.rag.chunking import Passage, chunk_document
from farmhand.rag.readers import Document, Skipped, find_files, read_document
from farmhand.rag.store import CollectionFile, CollectionInfo, embedded_text

Mode = Literal["hybrid", "keyword", "vector"]
MODES: tuple[Mode, ...] = ("hybrid", "keyword", "vector")
RRF_K = 60
"""Reciprocal rank fusion's constant: a passage's share from one ranking is 1/(60 + rank)."""
VECTOR_WEIGHT = 1.0
"""The vector ranking's weight in hybrid's fusion, BM25's being 1 (bench/rag_retrieval.py
`--levers` measures others)."""
CANDIDATES = 50
"""How deep each ranking is read before fusing."""
MAX_TOP_K = 50
MAX_QUERY_CHARS = 4000
EMBED_BATCH = 16


class Embedder(Protocol):
    """Turns texts into vectors; `name` says whose vectors (a collection keeps to one)."""

    @property
    def name(self) -> str: ...

    def embed(self, texts: Sequence[str]) -> list[list[float]]: ...


@dataclass(frozen=True)
class Hit:
    """One passage a search found: where it is, and its fused score (higher is better)."""

    label: str
    source: str
    passage: Passage
    score: float

    @property
    def citation(self) -> str:
        return f"{self.label}, {self.passage.where}"

    def to_json(self) -> dict[str, object]:
        return {
            "source": self.label,
            "path": self.source,
            "start_line": self.passage.start_line,
            "end_line": self.passage.end_line,
            "page": self.passage.page,
            "score": round(self.score, 6),
            "text": self.passage.text,
        }


@dataclass
class AddReport:
    added: list[tuple[str, int]] = field(default_factory=list)
    """(label, passages) of each document indexed."""
    unchanged: list[str] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    reembedded: int = 0
    """Passages already in the collection embedded again (`reindex`)."""


Progress = Callable[[str], None]


class Library:
    """Collections as SQLite files in `folder`. `embedder_for(name)` gives the embedder a
    collection was built with, to embed its questions. Blocking: call from worker threads."""

    def __init__(self, folder: Path, embedder_for: Callable[[str], Embedder]) -> None:
        self.folder = folder
        self._embedder_for = embedder_for
        self._open: dict[str, CollectionFile] = {}
        self._embedders: dict[str, Embedder] = {}
        self._lock = threading.Lock()

    def names(self) -> list[str]:
        if not self.folder.is_dir():
            return []
        found = (p.stem for p in self.folder.glob("*.db"))
        return sorted(n for n in found if COLLECTION_NAME.fullmatch(n))

    def collection(self, name: str, *, create: bool = False) -> CollectionFile:
        """The collection's file; RequestError for a bad name, or for one that does not
        exist (unless `create`), naming those that do."""
        check_collection_name(name)
        path = self.folder / f"{name}.db"
        with self._lock:
            found = self._open.get(name)
            if found is not None and found.is_at(path):
                return found
            # Removed or replaced since it was opened (a service's library outlives both): the
            # file there now is opened; the old connection closes when no search holds it.
            self._open.pop(name, None)
            if not path.is_file():
                if not create:
                    known = ", ".join(self.names()) or "none yet"
                    raise RequestError(
                        f"no collection {name!r}; collections: {known}. Create one with"
                        f" `farmhand rag add PATH --collection {name}`",
                        param="collection",
                    )
                self.folder.mkdir(parents=True, exist_ok=True)
            found = self._open[name] = CollectionFile(path, name)
            return found

    def info(self, name: str) -> CollectionInfo:
        return self.collection(name).info()

    def add(
        self,
        name: str,
        paths: Sequence[Path],
        embedder: Embedder,
        progress: Progress | None = None,
        *,
        reindex: bool = False,
    ) -> AddReport:
        """Index the files `paths` name (folders walked); a file already indexed with the
        same bytes is left as it is, a changed one replaced. `reindex`: first embed what
        the collection holds again with `embedder` (a collection indexed with another
        model is otherwise refused, RequestError)."""
        files = list(find_files(paths))  # every path checked before anything is written
        store = self.collection(name, create=True)
        report = AddReport()
        if reindex:
            report.reembedded = self.reindex(name, embedder, progress)
        for path in files:
            document = read_document(path)
            if isinstance(document, Skipped):
                report.skipped.append(document)
                continue
            source, label = str(path.resolve()), _label(path)
            digest = _digest(document)
            if store.digest_of(source) == digest:
                report.unchanged.append(label)
                continue
            passages = chunk_document(document)
            if progress is not None:
                progress(f"{label}: {len(passages)} passages")
            vectors = self._embed(embedder, [embedded_text(label, p.text) for p in passages])
            if vectors:
                store.claim(embedder.name, len(vectors[0]))
            store.put_document(source, label, document.kind, digest, passages, vectors)
            report.added.append((label, len(passages)))
        return report

    def reindex(self, name: str, embedder: Embedder, progress: Progress | None = None) -> int:
        """Embed every passage of collection `name` again with `embedder`, whose collection
        it then is (the passages' stored text is embedded: no file is read again). Returns
        how many passages were embedded."""
        store = self.collection(name)
        ids, texts = store.embedded_texts()
        if progress is not None:
            progress(f"re-embedding {len(texts)} passages with {embedder.name}")
        vectors = self._embed(embedder, texts)
        store.replace_embeddings(embedder.name, ids, vectors)
        return len(ids)

    def query(self, name: str, text: str, *, top_k: int = 5, mode: Mode = "hybrid") -> list[Hit]:
        """The `top_k` passages that best answer `text`, best first."""
        _check_question(text)
        if not 1 <= top_k <= MAX_TOP_K:
            raise RequestError(f"top_k must be 1 to {MAX_TOP_K} (got {top_k})", param="top_k")
        rankings = self.rankings(name, text, mode)
        scores = fuse(rankings, weights=[1.0, VECTOR_WEIGHT] if len(rankings) == 2 else None)
        best = best_first(scores)[:top_k]
        found = self.collection(name).passages(best)
        return [
            Hit(found[i].label, found[i].source, found[i].passage, scores[i])
            for i in best
            if i in found
        ]

    def rankings(self, name: str, text: str, mode: Mode = "hybrid") -> list[list[int]]:
        """The passage ids that `mode` ranks for `text`, CANDIDATES deep each: BM25's, then
        the vectors' (hybrid: both, to be fused)."""
        _check_question(text)
        if mode not in MODES:
            raise RequestError(f"mode must be one of {', '.join(MODES)} (got {mode!r})")
        store = self.collection(name)
        rankings: list[list[int]] = []
        if mode != "vector":
            rankings.append(store.keyword_ranking(text, CANDIDATES))
        if mode != "keyword":
            embedder_name = store.meta("embedder")
            if embedder_name is not None:
                (vector,) = self._embedder(embedder_name).embed([text])
                rankings.append(store.vector_ranking(vector, CANDIDATES))
        return rankings

    def _embedder(self, name: str) -> Embedder:
        with self._lock:
            found = self._embedders.get(name)
            if found is None:
                found = self._embedders[name] = self._embedder_for(name)
            return found

    def _embed(self, embedder: Embedder, texts: list[str]) -> list[list[float]]:
        vectors: list[list[float]] = []
        for start in range(0, len(texts), EMBED_BATCH):
            vectors += embedder.embed(texts[start : start + EMBED_BATCH])
        return vectors

    def close(self) -> None:
        with self._lock:
            for store in self._open.values():
                store.close()
            self._open.clear()
            for embedder in self._embedders.values():
                close = getattr(embedder, "close", None)
                if close is not None:
                    close()
            self._embedders.clear()


def fuse(
    rankings: Sequence[Sequence[int]],
    *,
    k: float = RRF_K,
    weights: Sequence[float] | None = None,
) -> dict[int, float]:
    """Reciprocal rank fusion: each ranking gives a passage weight/(k + its rank) (weights
    1 unless given, one per ranking)."""
    scores: dict[int, float] = {}
    for i, ranking in enumerate(rankings):
        weight = 1.0 if weights is None else weights[i]
        for rank, passage in enumerate(ranking, start=1):
            scores[passage] = scores.get(passage, 0.0) + weight / (k + rank)
    return scores


def best_first(scores: dict[int, float]) -> list[int]:
    """Passage ids by score, highest first (a tie keeps the order they were scored in)."""
    return sorted(scores, key=lambda i: -scores[i])


def _check_question(text: str) -> None:
    if not text.strip():
        raise RequestError("the query is empty; ask something", param="query")
    if len(text) > MAX_QUERY_CHARS:
        raise RequestError(
            f"the query is {len(text)} characters, more than {MAX_QUERY_CHARS}; shorten it",
            param="query",
        )


def _digest(document: Document) -> str:
    digest = hashlib.sha256()
    for page in document.pages:
        digest.update(page.text.encode("utf-8", "surrogatepass"))
        digest.update(b"\0")
    return digest.hexdigest()


def _label(path: Path) -> str:
    """How answers cite a file: relative to the working directory when inside it."""
    resolved = path.resolve()
    try:
        return str(resolved.relative_to(Path.cwd().resolve()))
    except ValueError:
        return os.fspath(resolved)
