"""farmhand's small RAG: document collections a model can search.

`farmhand rag add PATH --collection NAME` reads text, Markdown, code and PDF files
(`readers`), cuts them into passages that know their lines (`chunking`), embeds them
through llama.cpp (`embedding`: all-MiniLM-L6-v2 by default, a sentence-embedding model a
package ships; or a chat model's embedding context, the one `/api/embed` uses) and stores
passages, words and vectors in one SQLite file per collection (`store`: FTS5 + sqlite-vec;
a collection keeps to one embedding model). A question runs BM25 and vector search and
fuses the two rankings (`library`). Models get the `rag_query` tool for the collections
their config lists (`toolset`); /mcp and `farmhand mcp serve` offer it too.
"""

from farmhand.rag.embedding import DEFAULT_EMBEDDER, GgufEmbedder, home_library
from farmhand.rag.library import MODES, AddReport, Embedder, Hit, Library, Mode
from farmhand.rag.toolset import TOOL_NAME, RagToolset

__all__ = [
    "DEFAULT_EMBEDDER",
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
