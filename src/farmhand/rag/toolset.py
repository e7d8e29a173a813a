"""The built-in `rag_query` tool a model gets for the collections its config lists
(`rag: [docs]`): the passages that answer a question, each with the file and lines to cite."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import anyio.to_thread

from farmhand.errors import FarmhandError
from farmhand.rag.library import Hit, Library
from farmhand.tools.definition import ToolDefinition
from farmhand.toolsets.base import ToolOutput

TOOL_NAME = "rag_query"
DEFAULT_TOP_K = 4
"""Passages a model gets per question: enough to find the answer, few enough for a small
model's context."""


class RagToolset:
    """`rag_query(query, collection?)` over `collections` of `library`."""

    def __init__(
        self, library: Library, collections: Sequence[str], top_k: int = DEFAULT_TOP_K
    ) -> None:
        self.library = library
        self.collections = list(collections)
        self.top_k = top_k

    async def list_tools(self) -> list[ToolDefinition]:
        properties: dict[str, Any] = {
            "query": {
                "type": "string",
                "description": "What to look for: the question, or the names and words the"
                " answer would contain.",
            }
        }
        if len(self.collections) > 1:
            properties["collection"] = {
                "type": "string",
                "enum": self.collections,
                "description": "The collection to search; all of them when omitted.",
            }
        listed = ", ".join(self.collections)
        return [
            ToolDefinition(
                TOOL_NAME,
                f"Search the documents of {listed} and return the passages that answer the"
                " query, each with its file and lines. Use it for questions about these"
                " documents, and cite the file of what you use.",
                {"type": "object", "properties": properties, "required": ["query"]},
                annotations={"readOnlyHint": True},
            )
        ]

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> ToolOutput:
        if name != TOOL_NAME:
            return ToolOutput(f"unknown tool {name!r}; this toolset has {TOOL_NAME}", True)
        query = arguments.get("query")
        if not isinstance(query, str) or not query.strip():
            return ToolOutput("rag_query needs a `query`: the question, as text", True)
        asked = arguments.get("collection")
        if asked is not None and asked not in self.collections:
            return ToolOutput(
                f"no collection {asked!r} here; use one of {', '.join(self.collections)}", True
            )
        names = [asked] if isinstance(asked, str) else self.collections
        try:
            hits = await anyio.to_thread.run_sync(self._search, names, query)
        except FarmhandError as exc:
            return ToolOutput(str(exc), True)
        return ToolOutput(render_hits(query, hits))

    def _search(self, names: Sequence[str], query: str) -> list[Hit]:
        hits = [h for n in names for h in self.library.query(n, query, top_k=self.top_k)]
        return sorted(hits, key=lambda h: -h.score)[: self.top_k]


def render_hits(query: str, hits: Sequence[Hit]) -> str:
    """The passages as a model reads them: numbered, each under its citation."""
    if not hits:
        return (
            f"No passage matches {query!r}. Try other words, or say the documents do not cover it."
        )
    parts = [f"[{i}] {hit.citation}\n{hit.passage.text}" for i, hit in enumerate(hits, start=1)]
    parts.append("Answer from these passages and name the file each fact comes from.")
    return "\n\n".join(parts)
