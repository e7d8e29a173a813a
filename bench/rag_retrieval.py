"""Claim: farmhand's hybrid RAG search (BM25 + embeddings, reciprocal rank fusion) finds the
documents a question needs better than either ranking alone.

Data: the knowledge base of tau2-bench's `banking_knowledge` domain (Sierra Research, MIT),
as the PyPI package inspect-evals ships it (0.28.0: 698 documents, 97 tasks, each task listing
the documents it needs, `required_documents`). Each document becomes a Markdown file, the
collection is built with `Library.add` (the code `farmhand rag add` runs), and each task's
customer text (cut to the query limit) is the question. Per mode (hybrid, keyword-only,
vector-only, in the same run over the same index and the same rankings), over the
distinct documents of the ranked passages:

- hit@5: a needed document is among the first 5;
- recall@5: the share of the needed documents among the first 5;
- MRR: the mean of 1 / rank of the first needed document (0 past the 50th passage).

Ratios are against keyword-only (BM25), the baseline. `--levers` also scores hybrid with
other fusion constants and vector weights: one is chosen on the even-numbered tasks and its
MRR reported on the odd ones, which played no part in choosing it. The data is read from
the package's wheel, which `make bench-data` downloads into .bench-data/ with pip (no
dependencies, nothing installed or imported: only its files are read; `make bench` and
`make bench-rag` do it first).

    .venv/bin/python bench/rag_retrieval.py [--model all-minilm-l6-v2] [--tasks N] [--levers]
        [--data WHEEL]  # default .bench-data/inspect_evals-0.28.0-py3-none-any.whl
        [--docs N]      # a smaller corpus: the documents the tasks need, then others in
                        # the package's order up to N (a run over all 698 embeds ~200k tokens)
        [--index DIR]   # keep the index in DIR between runs
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import json
import sys
import tempfile
import time
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from farmhand.rag.embedding import DEFAULT_EMBEDDER, GgufEmbedder
from farmhand.rag.library import (
    MAX_QUERY_CHARS,
    MAX_TOP_K,
    MODES,
    RRF_K,
    VECTOR_WEIGHT,
    Embedder,
    Library,
    Mode,
    best_first,
    fuse,
)

DOMAIN = "inspect_evals/tau2/data/domains/banking_knowledge"
WHEEL = Path(__file__).parents[1] / ".bench-data" / "inspect_evals-0.28.0-py3-none-any.whl"
COLLECTION = "banking"
CUTOFF = 5


@dataclass(frozen=True)
class Task:
    id: str
    question: str
    needed: frozenset[str]


def load(wheel: Path) -> tuple[list[dict[str, str]], list[Task]]:
    """The domain's documents and the tasks that name the documents they need, read from
    the package's wheel (a zip file) without installing it."""
    if not wheel.is_file():
        sys.exit(f"{wheel}: no such file; `make bench-data` downloads it (or give --data WHEEL)")
    with zipfile.ZipFile(wheel) as archive:
        packed = archive.read(f"{DOMAIN}/documents.json.gz")
        listed = archive.read(f"{DOMAIN}/tasks.json")
    documents = json.loads(gzip.decompress(packed))
    tasks = [
        Task(t["id"], t["user_scenario"]["instructions"], frozenset(t["required_documents"]))
        for t in json.loads(listed)
        if t.get("required_documents")
    ]
    return documents, tasks


class Remembered:
    """An embedder that embeds each text once (a document repeated in the corpus too) and
    keeps count of the seconds it took."""

    def __init__(self, inner: GgufEmbedder) -> None:
        self.inner = inner
        self.seen: dict[str, list[float]] = {}
        self.seconds = 0.0

    @property
    def name(self) -> str:
        return self.inner.name

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        todo = [t for t in dict.fromkeys(texts) if t not in self.seen]
        if todo:
            start = time.perf_counter()
            for text, vector in zip(todo, self.inner.embed(todo), strict=True):
                self.seen[text] = vector
            self.seconds += time.perf_counter() - start
        return [self.seen[t] for t in texts]


def build(
    library: Library, documents: list[dict[str, str]], embedder: Embedder, where: Path
) -> None:
    files = where / "documents"
    files.mkdir(parents=True, exist_ok=True)
    for document in documents:
        text = f"# {document['title']}\n\n{document['content']}\n"
        (files / f"{document['id']}.md").write_text(text, encoding="utf-8")
    start = time.perf_counter()
    # Labels relative to the index folder ("documents/ID.md", as `farmhand rag add docs`
    # run beside them labels them): a temp folder's random name in every embedded label
    # would move the vectors from one run to the next.
    with contextlib.chdir(where):
        report = library.add(COLLECTION, [files], embedder)
    passages = sum(n for _, n in report.added)
    print(
        f"indexed {len(report.added)} documents ({passages} passages), {len(report.unchanged)}"
        f" unchanged, in {time.perf_counter() - start:.0f} s",
        flush=True,
    )


def smaller_corpus(
    documents: list[dict[str, str]], tasks: list[Task], size: int
) -> list[dict[str, str]]:
    """The documents the tasks need, then the others in the package's order, `size` in all
    (the needed ones are kept even past it)."""
    needed = set().union(*(t.needed for t in tasks))
    kept = [d for d in documents if d["id"] in needed]
    others = [d for d in documents if d["id"] not in needed]
    return kept + others[: max(0, size - len(kept))]


Ranking = list[str]
"""Document ids, best first (each once: the first passage of a document counts)."""


def documents_of(library: Library, passages: Sequence[int]) -> Ranking:
    found = library.collection(COLLECTION).passages(passages)
    return list(dict.fromkeys(Path(found[i].source).stem for i in passages if i in found))


def fused(library: Library, rankings: list[list[int]], k: float, vector_weight: float) -> Ranking:
    """Hybrid's documents as `Library.query` ranks them (the same `fuse`, the same cut),
    with the fusion's constant and the vector ranking's weight as given."""
    scores = fuse(rankings, k=k, weights=[1.0, vector_weight])
    return documents_of(library, best_first(scores)[:MAX_TOP_K])


@dataclass
class Score:
    """hit@5, recall@5 and MRR summed over tasks."""

    hit: float = 0.0
    recall: float = 0.0
    mrr: float = 0.0
    tasks: int = 0

    def add(self, ranked: Ranking, needed: frozenset[str]) -> None:
        top = set(ranked[:CUTOFF])
        found = [i for i, doc in enumerate(ranked, start=1) if doc in needed]
        self.hit += bool(top & needed)
        self.recall += len(top & needed) / len(needed)
        self.mrr += 1 / found[0] if found else 0.0
        self.tasks += 1

    def means(self) -> tuple[float, float, float]:
        n = self.tasks or 1
        return self.hit / n, self.recall / n, self.mrr / n


SHIPPED = (RRF_K, VECTOR_WEIGHT)
"""The fusion `farmhand rag` ships: its constant and the vector ranking's weight."""
LEVERS = sorted({SHIPPED, *((k, w) for k in (10, 30, 60, 120) for w in (0.5, 1.0, 1.5, 2.0, 3.0))})
"""(k, vector weight) pairs `--levers` tries."""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default=DEFAULT_EMBEDDER, help="embedding model")
    parser.add_argument("--tasks", type=int, default=0, help="only the first N tasks")
    parser.add_argument("--docs", type=int, default=0, help="corpus of at most N documents")
    parser.add_argument("--index", type=Path, help="keep the index here between runs")
    parser.add_argument("--data", type=Path, default=WHEEL, help="inspect-evals' wheel")
    parser.add_argument(
        "--levers", action="store_true", help="also try RRF's k and the vector weight"
    )
    args = parser.parse_args()

    documents, tasks = load(args.data)
    tasks = tasks[: args.tasks] if args.tasks else tasks
    if args.docs:
        documents = smaller_corpus(documents, tasks, args.docs)
    embedder = Remembered(GgufEmbedder(args.model))
    scores = {mode: Score() for mode in MODES}
    levers = {lever: (Score(), Score()) for lever in LEVERS}  # (even tasks, odd tasks)
    keyword_halves = (Score(), Score())
    with tempfile.TemporaryDirectory() as scratch:
        where = args.index or Path(scratch)
        library = Library(where / "rag", lambda name: embedder)
        try:
            build(library, documents, embedder, where)
            embed_seconds = embedder.seconds
            start = time.perf_counter()
            for i, task in enumerate(tasks):
                question = task.question[:MAX_QUERY_CHARS]
                keyword, vector = library.rankings(COLLECTION, question, "hybrid")
                scores["keyword"].add(documents_of(library, keyword), task.needed)
                keyword_halves[i % 2].add(documents_of(library, keyword), task.needed)
                scores["vector"].add(documents_of(library, vector), task.needed)
                hybrid = fused(library, [keyword, vector], *SHIPPED)
                scores["hybrid"].add(hybrid, task.needed)
                for lever, halves in levers.items() if args.levers else ():
                    halves[i % 2].add(fused(library, [keyword, vector], *lever), task.needed)
            query_seconds = time.perf_counter() - start
        finally:
            library.close()
            embedder.inner.close()
    print(
        f"\n{len(tasks)} tasks, {len(documents)} documents, embeddings: {embedder.name}"
        f" (corpus {embed_seconds:.0f} s; queries incl. embedding {query_seconds:.0f} s)\n"
    )
    print_table(scores)
    if args.levers:
        print_levers(levers, keyword_halves)


def print_table(scores: dict[Mode, Score]) -> None:
    base = scores["keyword"].means()
    header = f"{'mode':<10}{'hit@5':>8}{'recall@5':>10}{'MRR':>8}"
    print(f"{header}   ratio to keyword (hit, recall, MRR)")
    for mode in ("keyword", "vector", "hybrid"):
        values = scores[mode].means()
        ratios = ", ".join(f"{v / b:.2f}" if b else "-" for v, b in zip(values, base, strict=True))
        print(f"{mode:<10}{values[0]:>8.3f}{values[1]:>10.3f}{values[2]:>8.3f}   {ratios}")


def print_levers(
    levers: dict[tuple[int, float], tuple[Score, Score]], keyword: tuple[Score, Score]
) -> None:
    """MRR of each (k, weight) on the even tasks (where one is chosen) and on the odd ones
    (where the choice is checked: they played no part in it)."""
    print("\nhybrid's levers, MRR: chosen on the even tasks, checked on the odd ones")
    print(f"{'k':>5}{'weight':>8}{'even':>8}{'odd':>8}")
    print(f"{'  keyword':<13}{keyword[0].means()[2]:>8.3f}{keyword[1].means()[2]:>8.3f}")
    for (k, weight), (even, odd) in levers.items():
        print(f"{k:>5}{weight:>8.1f}{even.means()[2]:>8.3f}{odd.means()[2]:>8.3f}")
    best = max(levers, key=lambda lever: levers[lever][0].means()[2])
    print(
        f"best on the even tasks: k={best[0]}, weight {best[1]}; on the odd tasks MRR"
        f" {levers[best][1].means()[2]:.3f} (shipped k={SHIPPED[0]}, weight {SHIPPED[1]}:"
        f" {levers[SHIPPED][1].means()[2]:.3f}; keyword {keyword[1].means()[2]:.3f})"
    )


if __name__ == "__main__":
    main()
