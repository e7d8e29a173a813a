"""farmhand's small RAG: document collections a model can search.

`farmhand rag add PATH --collection NAME` reads text, Markdown, code and PDF files
(`readers`), cuts them into passages that know their lines (`chunking`), embeds them with
the embedded model (`embedding`, the context `/api/embed` uses) and stores passages, words
and vectors in one SQLite file per collection (`store`: FTS5 + sqlite-vec). A question runs
BM25 and vector search and fuses the two rankings (`library`). Models get the `rag_query`
tool for the collections their config lists (`toolset`); /mcp and `farmhand mcp serve`
offer it too.
"""

from farmhand.rag.embedding import GgufEmbedder, home_library
from farmhand.rag.library import MODES, AddReport, Embedder, Hit, Library, Mode
from farmhand.rag.toolset import TOOL_NAME, RagToolset

__all__ = [
    "MODES",
    "TOOL_NAME",
    "AddReport",
    "Embedder",
    "GgufEmbedder",
    "Hit",
    "Library",
    "Mode",
    "RagToolset",
    "home_library",
]
