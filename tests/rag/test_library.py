"""Collections on disk: adding a folder of documents, replacing what changed, the three
rankings, and every bad input answered with what to fix (the SQLite file is real, with
FTS5 and sqlite-vec; the embedder is tests/rag/word_vectors.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.rag.word_vectors import WordVectors
from tests.support.pdf_files import pdf_bytes

from farmhand.errors import RequestError
from farmhand.rag.library import RRF_K, Library, best_first, fuse

GUIDE = """# Greenhouse guide

## Watering
Water the tomatoes every morning before nine; the soil should stay damp, never wet.

## Heating
The heater turns on below 12 degrees Celsius.
"""
CODE = '''"""Widgets."""


def parse_widget_config(text):
    """Read a widget's settings from TOML text."""
    return toml.loads(text)
'''


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    (folder / "src").mkdir(parents=True)
    (folder / ".git").mkdir()
    (folder / "node_modules").mkdir()
    (folder / "guide.md").write_text(GUIDE)
    (folder / "src" / "widgets.py").write_text(CODE)
    (folder / "invoice.pdf").write_bytes(
        pdf_bytes(["Invoice 2026-117\nCustomer: Ada Farms", "Total due: 4,310 EUR by March 3"])
    )
    (folder / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR")
    (folder / "latin1.txt").write_bytes("caf\xe9 au lait".encode("latin-1"))
    (folder / ".git" / "config").write_text("[core] secret stuff")
    (folder / "node_modules" / "dep.js").write_text("module.exports = 1")
    return folder


@pytest.fixture
def library(tmp_path: Path) -> Iterator[Library]:
    made = Library(tmp_path / "rag", lambda name: WordVectors(name))
    yield made
    made.close()


def test_add_reads_text_markdown_code_and_pdf_and_says_what_it_skipped(
    library: Library, docs: Path
) -> None:
    embedder = WordVectors()
    report = library.add("docs", [docs], embedder)

    added = dict(report.added)
    assert sorted(Path(label).name for label in added) == ["guide.md", "invoice.pdf", "widgets.py"]
    assert sorted((s.path.name, s.reason) for s in report.skipped) == [
        ("latin1.txt", "not UTF-8 text"),
        ("logo.png", "a binary file"),
    ]
    info = library.info("docs")
    assert (info.documents, info.passages, info.embedder) == (
        3,
        sum(added.values()),
        "word-vectors",
    )
    assert info.dimensions == 64
    assert (library.folder / "docs.db").is_file()
    # Each passage was embedded with its file's name in front (a question may name the file).
    firsts = {t.split("\n", 1)[0] for batch in embedder.calls for t in batch}
    assert {Path(f).name for f in firsts} == {"guide.md", "invoice.pdf", "widgets.py"}


def test_searches_cite_file_lines_and_pages(library: Library, docs: Path) -> None:
    library.add("docs", [docs], WordVectors())

    (hit,) = library.query("docs", "parse_widget_config", top_k=1, mode="keyword")
    assert hit.label.endswith("widgets.py") and "def parse_widget_config" in hit.passage.text
    assert hit.citation.endswith("widgets.py, lines 1-6")

    (hit,) = library.query("docs", "when is the invoice total due", top_k=1)
    assert hit.label.endswith("invoice.pdf") and hit.passage.page == 2
    assert hit.citation.endswith("invoice.pdf, page 2, line 1")

    hits = library.query("docs", "how often to water tomatoes", top_k=2, mode="vector")
    assert hits[0].label.endswith("guide.md") and "every morning" in hits[0].passage.text
    assert hits[0].score > hits[1].score


def test_a_changed_file_is_replaced_and_an_unchanged_one_kept(library: Library, docs: Path) -> None:
    library.add("docs", [docs], WordVectors())
    (docs / "guide.md").write_text("# Greenhouse guide\nThe heater is gone; use blankets.\n")
    report = library.add("docs", [docs], WordVectors())
    assert [Path(label).name for label, _ in report.added] == ["guide.md"]
    assert sorted(Path(label).name for label in report.unchanged) == ["invoice.pdf", "widgets.py"]
    assert library.query("docs", "tomatoes", mode="keyword") == []  # the old text is gone
    (hit,) = library.query("docs", "blankets", top_k=1, mode="keyword")
    assert hit.label.endswith("guide.md")
    assert library.info("docs").documents == 3


def test_a_library_that_outlives_its_collections_sees_them_removed_and_replaced(
    tmp_path: Path, library: Library, docs: Path
) -> None:
    # A service's library stays open for its whole run while `farmhand rag` (another
    # process) removes or rebuilds a collection: every query reads the file there now.
    library.add("docs", [docs], WordVectors())
    assert library.collection("docs") is library.collection("docs")  # opened once
    (library.folder / "docs.db").unlink()
    with pytest.raises(RequestError, match="no collection 'docs'; collections: none yet"):
        library.query("docs", "tomatoes", mode="keyword")

    other = Library(library.folder, lambda name: WordVectors(name))
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "shed.md").write_text("The shed key hangs by the door.\n")
    other.add("docs", [notes], WordVectors())  # a new file under the same name
    other.close()
    (hit,) = library.query("docs", "shed key", top_k=1, mode="keyword")
    assert hit.label.endswith("shed.md")
    assert library.query("docs", "tomatoes", mode="keyword") == []


def test_a_collection_keeps_to_the_model_it_was_built_with(library: Library, docs: Path) -> None:
    library.add("docs", [docs / "guide.md"], WordVectors("model-a"))
    with pytest.raises(RequestError) as info:
        library.add("docs", [docs / "src"], WordVectors("model-b"))
    assert str(info.value) == (
        "collection 'docs' was indexed with the embeddings of 'model-a' (64 dimensions), not"
        " 'model-b' (64); vectors of two models are never mixed. Re-index it: `farmhand rag"
        " add PATH --collection docs --reindex` embeds every passage again with 'model-b';"
        " or keep its model: --model model-a"
    )
    assert library.info("docs").documents == 1  # nothing of src/ was written


def test_a_model_of_the_same_name_with_other_dimensions_is_refused_too(
    library: Library, docs: Path
) -> None:
    library.add("docs", [docs / "guide.md"], WordVectors("model-a"))
    with pytest.raises(RequestError, match=r"'model-a' \(64 dimensions\), not 'model-a' \(32\)"):
        library.add("docs", [docs / "src"], WordVectors("model-a", dimensions=32))
    # a question embedded by a model file that changed under the collection says so too
    library.close()
    changed = Library(library.folder, lambda name: WordVectors(name, dimensions=32))
    try:
        with pytest.raises(RequestError, match="holds 64-dimension vectors of 'model-a'"):
            changed.query("docs", "watering", mode="vector")
        assert changed.query("docs", "watering", mode="keyword")  # words need no vectors
    finally:
        changed.close()


def test_reindex_embeds_every_stored_passage_with_the_new_model(tmp_path: Path, docs: Path) -> None:
    sizes = {"model-a": 64, "model-b": 32}  # the new model's vectors are shorter
    library = Library(tmp_path / "sized", lambda name: WordVectors(name, sizes[name]))
    try:
        first = library.add("docs", [docs], WordVectors("model-a"))
        stored = sum(n for _, n in first.added)
        (docs / "notes.md").write_text("# Notes\nThe goats prefer clover.\n")
        embedder = WordVectors("model-b", sizes["model-b"])
        report = library.add("docs", [docs], embedder, reindex=True)

        assert report.reembedded == stored
        assert [Path(label).name for label, _ in report.added] == ["notes.md"]
        info = library.info("docs")
        assert (info.embedder, info.dimensions, info.documents) == ("model-b", 32, 4)
        # the stored passages were embedded from their text under their file's name, as added
        again = [text for batch in embedder.calls for text in batch][:stored]
        assert any(text.endswith("widgets.py\n" + CODE.strip()) for text in again)
        hits = library.query("docs", "how often to water tomatoes", top_k=1, mode="vector")
        assert hits[0].label.endswith("guide.md")
        (hit,) = library.query("docs", "Notes: the goats prefer clover", top_k=1, mode="vector")
        assert hit.label.endswith("notes.md")
    finally:
        library.close()


@pytest.mark.parametrize("name", ["../etc", "a/b", ".hidden", "", "x" * 65, "docs\n"])
def test_a_bad_collection_name_is_refused_before_anything_is_touched(
    library: Library, docs: Path, name: str
) -> None:
    with pytest.raises(RequestError, match="is not a collection name: use 1 to 64 letters"):
        library.add(name, [docs], WordVectors())
    with pytest.raises(RequestError, match="is not a collection name"):
        library.query(name, "anything")
    assert not library.folder.exists()


def test_bad_queries_say_what_to_fix(library: Library, docs: Path) -> None:
    with pytest.raises(RequestError) as info:
        library.query("nope", "anything")
    assert str(info.value) == (
        "no collection 'nope'; collections: none yet. Create one with"
        " `farmhand rag add PATH --collection nope`"
    )
    library.add("docs", [docs / "guide.md"], WordVectors())
    with pytest.raises(RequestError, match="collections: docs"):
        library.query("nope", "anything")
    with pytest.raises(RequestError, match="the query is empty"):
        library.query("docs", "   ")
    with pytest.raises(RequestError, match="more than 4000; shorten it"):
        library.query("docs", "water " * 1000)
    with pytest.raises(RequestError, match=r"top_k must be 1 to 50 \(got 0\)"):
        library.query("docs", "water", top_k=0)
    with pytest.raises(RequestError, match="mode must be one of hybrid, keyword, vector"):
        library.query("docs", "water", mode="fuzzy")  # type: ignore[arg-type]
    with pytest.raises(RequestError, match="does not exist; name a file or a folder"):
        library.add("docs", [docs / "missing"], WordVectors())


@pytest.mark.parametrize(
    "query",
    ['"water', "water OR", "NEAR(water heater)", "heat*", "col:water", "^water", "') --", "::"],
)
def test_query_syntax_is_never_read_as_fts5_syntax(
    library: Library, docs: Path, query: str
) -> None:
    library.add("docs", [docs / "guide.md"], WordVectors())
    hits = library.query("docs", query, mode="keyword")
    assert all(h.label.endswith("guide.md") for h in hits)


def test_fusion_weights_a_ranking_and_moves_its_constant() -> None:
    scores = fuse([[1, 2], [2, 1]], k=10, weights=[1.0, 2.0])
    assert scores[1] == pytest.approx(1 / 11 + 2 / 12)
    assert scores[2] == pytest.approx(1 / 12 + 2 / 11)
    assert best_first(scores) == [2, 1]


def test_fusion_adds_reciprocal_ranks() -> None:
    scores = fuse([[1, 2, 3], [3, 1]])
    assert scores[1] == pytest.approx(1 / (RRF_K + 1) + 1 / (RRF_K + 2))
    assert scores[3] == pytest.approx(1 / (RRF_K + 3) + 1 / (RRF_K + 1))
    assert scores[2] == pytest.approx(1 / (RRF_K + 2))
    assert sorted(scores, key=lambda i: -scores[i]) == [1, 3, 2]
