"""RAG for every face: the collections under the service's home, searched with the
embedding contexts the service keeps (the ones `/api/embed` uses)."""

from __future__ import annotations

import anyio.to_thread

from farmhand.rag.embedding import home_library
from farmhand.rag.library import Hit, Mode
from farmhand.service.state import ServiceState


async def query_collection(
    state: ServiceState, collection: str, query: str, *, top_k: int, mode: Mode = "hybrid"
) -> list[Hit]:
    """The passages of `collection` that best answer `query`; RequestError for a collection
    that does not exist (naming those that do) or a query out of bounds."""

    def run() -> list[Hit]:
        library = home_library(state.home, state.files.embedder)
        try:
            return library.query(collection, query, top_k=top_k, mode=mode)
        finally:
            library.close()

    return await anyio.to_thread.run_sync(run)


async def collection_names(state: ServiceState) -> list[str]:
    return await anyio.to_thread.run_sync(lambda: home_library(state.home).names())
