"""RAG for every face: the collections of the service's library (`ServiceState.library`),
searched with the embedding contexts the service keeps (the ones `/api/embed` uses)."""

from __future__ import annotations

import anyio.to_thread

from farmhand.rag.library import Hit, Mode
from farmhand.service.state import ServiceState


async def query_collection(
    state: ServiceState, collection: str, query: str, *, top_k: int, mode: Mode = "hybrid"
) -> list[Hit]:
    """The passages of `collection` that best answer `query`; RequestError for a collection
    that does not exist (naming those that do) or a query out of bounds."""
    library = state.library
    return await anyio.to_thread.run_sync(
        lambda: library.query(collection, query, top_k=top_k, mode=mode)
    )


async def collection_names(state: ServiceState) -> list[str]:
    return await anyio.to_thread.run_sync(state.library.names)
