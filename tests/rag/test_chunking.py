"""Passages: whole lines, bounded, citing their lines, breaking where the text does."""

from __future__ import annotations

from itertools import pairwise
from pathlib import Path

from farmhand.rag.chunking import MAX_CHARS, Passage, chunk_document, chunk_page
from farmhand.rag.readers import Document, Page


def test_a_short_text_is_one_passage_with_its_lines() -> None:
    (passage,) = chunk_page(Page("\n\nFirst line.\nSecond line.\n\n"))
    assert passage == Passage("First line.\nSecond line.", 3, 4)
    assert passage.where == "lines 3-4"


def test_markdown_sections_start_new_passages() -> None:
    intro = "Intro words. " * 60  # past the soft size
    text = f"# Title\n{intro}\n## Install\npip install farmhand\n"
    passages = chunk_page(Page(text), markdown=True)
    assert [p.text.splitlines()[0] for p in passages] == ["# Title", "## Install"]
    assert (passages[1].start_line, passages[1].end_line) == (3, 4)


def test_long_text_is_cut_within_bounds_and_overlaps() -> None:
    lines = [f"line {i} of a paragraph that goes on without a blank line" for i in range(200)]
    passages = chunk_page(Page("\n".join(lines)))
    assert len(passages) > 5
    assert all(len(p.text) <= MAX_CHARS for p in passages)
    for before, after in pairwise(passages):
        # The next passage repeats the last lines of the one before, and moves on.
        assert after.start_line <= before.end_line < after.end_line
    assert passages[0].start_line == 1 and passages[-1].end_line == 200


def test_a_huge_line_is_split_and_pdf_pages_are_cited() -> None:
    document = Document(
        path=Path("x.pdf"),
        kind="pdf",
        pages=(Page("a" * (3 * MAX_CHARS), 1), Page("Total due: 42 EUR", 2)),
    )
    passages = chunk_document(document)
    assert all(len(p.text) <= MAX_CHARS for p in passages)
    assert passages[-1] == Passage("Total due: 42 EUR", 1, 1, 2)
    assert passages[-1].where == "page 2, line 1"
    assert {p.page for p in passages[:-1]} == {1}
