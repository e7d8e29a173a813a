"""Documents cut into passages that a search returns and a model reads: whole lines, a few
hundred tokens each, each knowing its lines (and PDF page) so an answer can cite it.

A passage ends at a blank line or a Markdown heading once it is long enough, so paragraphs,
sections and functions tend to stay whole; one that must be cut mid-paragraph repeats its
last lines at the start of the next, so a sentence across the cut is found in either.
"""

from __future__ import annotations

from dataclasses import dataclass

from farmhand.rag.readers import Document, Page

MAX_CHARS = 1200
"""Longest passage (about 300 tokens of English, well inside the embedding context)."""
SOFT_CHARS = 600
"""Past this, a blank line or a heading ends the passage."""
OVERLAP_CHARS = 200
"""What a passage cut mid-paragraph repeats of its end at the start of the next."""


@dataclass(frozen=True)
class Passage:
    text: str
    start_line: int
    end_line: int
    page: int | None = None

    @property
    def where(self) -> str:
        """`lines 3-9` or `page 2, lines 3-9`, as a citation says it."""
        lines = (
            f"line {self.start_line}"
            if self.start_line == self.end_line
            else f"lines {self.start_line}-{self.end_line}"
        )
        return lines if self.page is None else f"page {self.page}, {lines}"


def chunk_document(document: Document) -> list[Passage]:
    markdown = document.kind == "markdown"
    return [p for page in document.pages for p in chunk_page(page, markdown=markdown)]


def chunk_page(page: Page, *, markdown: bool = False) -> list[Passage]:
    passages: list[Passage] = []
    current: list[tuple[int, str]] = []  # (line number, text)
    size = 0

    def close(overlap: int) -> None:
        nonlocal current, size
        filled = [i for i, (_, text) in enumerate(current) if text.strip()]
        if filled:
            lines = current[: filled[-1] + 1]
            passages.append(
                Passage("\n".join(t for _, t in lines), lines[0][0], lines[-1][0], page.page)
            )
        kept: list[tuple[int, str]] = []
        if overlap > 0:
            budget = overlap
            for number, text in reversed(current[1:]):
                budget -= len(text) + 1
                if budget < 0:
                    break
                kept.insert(0, (number, text))
        current, size = kept, sum(len(t) + 1 for _, t in kept)

    for number, line in enumerate(page.text.splitlines(), start=1):
        for part in _pieces(line):
            blank = not part.strip()
            heading = markdown and part.startswith("#")
            if current and size >= SOFT_CHARS and (blank or heading):
                close(overlap=0)
            elif current and size + len(part) + 1 > MAX_CHARS:
                # Repeat the end, as much as fits beside the line that did not.
                close(overlap=min(OVERLAP_CHARS, MAX_CHARS - len(part) - 1))
            if blank and not current:
                continue
            current.append((number, part))
            size += len(part) + 1
    close(overlap=0)
    return passages


def _pieces(line: str) -> list[str]:
    """A line, or a very long one (minified code, a PDF's run-on text) in passage sizes."""
    if len(line) <= MAX_CHARS:
        return [line]
    step = MAX_CHARS - OVERLAP_CHARS
    return [line[i : i + MAX_CHARS] for i in range(0, len(line), step)]
