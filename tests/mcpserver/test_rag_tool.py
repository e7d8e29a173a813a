"""`rag_query` on farmhand's MCP server (LlamaFarm's "RAG query"), called by the real MCP
client: the passages with their citations, and hostile arguments answered as tool errors.
(Hybrid search with the real embedded model: tests/e2e/test_rag_embedded.py.)"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.mcpserver.test_farmhand_tools import farm
from tests.rag.word_vectors import WordVectors

from farmhand.rag.library import Library

pytestmark = pytest.mark.anyio


def build_docs(home: Path) -> None:
    docs = home.parent / "docs"
    docs.mkdir()
    (docs / "barn.md").write_text("# Barn\nThe barn door code is 4471.\n")
    (docs / "field.md").write_text("# Field\nThe north field grows barley.\n")
    library = Library(home / "rag", lambda name: WordVectors(name))
    try:
        library.add("farm-docs", [docs], WordVectors())
    finally:
        library.close()


async def test_rag_query_returns_cited_passages(tmp_path: Path) -> None:
    home = tmp_path / "home"
    build_docs(home)
    async with farm(home) as f:
        tools = {t.name: t for t in (await f.client.list_tools()).tools}
        assert tools["rag_query"].annotations.read_only_hint is True
        assert set(tools["rag_query"].input_schema["required"]) == {"query", "collection"}
        assert await f.call("list_collections") == {"collections": ["farm-docs"]}
        found = await f.call(
            "rag_query", query="barn door code", collection="farm-docs", mode="keyword"
        )
    assert found["collection"] == "farm-docs" and found["query"] == "barn door code"
    best = found["results"][0]
    assert Path(best["source"]).name == "barn.md"
    assert (best["start_line"], best["end_line"], best["page"]) == (1, 2, None)
    assert "4471" in best["text"]


async def test_rag_query_refuses_what_it_cannot_search(tmp_path: Path) -> None:
    home = tmp_path / "home"
    build_docs(home)
    async with farm(home) as f:
        missing = await f.error("rag_query", query="x", collection="secrets")
        assert missing == (
            "Error: no collection 'secrets'; collections: farm-docs. Create one with"
            " `farmhand rag add PATH --collection secrets`"
        )
        escape = await f.error("rag_query", query="x", collection="../../etc/passwd")
        assert "is not a collection name" in escape
        too_many = await f.error("rag_query", query="x", collection="farm-docs", top_k=500)
        assert too_many.startswith("Error: Invalid arguments for rag_query: top_k")
        long = await f.error("rag_query", query="barn " * 2000, collection="farm-docs")
        assert "more than 4000; shorten it" in long
        # Its vectors came from a model this machine cannot load: said, not crashed.
        other = await f.error("rag_query", query="barn", collection="farm-docs")
        assert "word-vectors" in other
    assert sorted(p.name for p in (home / "rag").iterdir()) == ["farm-docs.db"]
