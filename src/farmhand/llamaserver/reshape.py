"""llama-server answers whose shape changed across its versions, made into one shape.

- /health once carried slot counts and now says only {"status": "ok"}; the counts come from
  /slots (`is_processing` per slot) when the server serves it.
- /tokenize with pieces answers [{"id", "piece"}] (a piece that is not valid UTF-8 comes as
  a list of bytes); the tool promises {tokens: [int], pieces: [str]}.
- /embedding answered {"embedding": [...]} and now [{"index", "embedding": [[...]]}].
- /reranking results come in document order in some builds and best-first in others.
- POST /props may accept settings it does not apply; the answer says which it did not.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx

from farmhand.errors import LlamaServerError
from farmhand.llamaserver.client import server_message


def health_result(url: str, health: httpx.Response, slots: Any) -> dict[str, Any]:
    """{status: ok | loading_model | error, url, slots_idle, slots_processing}."""
    if health.status_code == 200:
        status, message = "ok", None
    else:
        message = server_message(health)
        status = "loading_model" if "loading" in message.lower() else "error"
    result: dict[str, Any] = {"status": status, "url": url}
    if message:
        result["message"] = message
    if isinstance(slots, list):
        busy = sum(1 for slot in slots if isinstance(slot, dict) and slot.get("is_processing"))
        result |= {"slots_idle": len(slots) - busy, "slots_processing": busy}
    return result


def props_after_change(props: Any, requested: dict[str, Any]) -> Any:
    """/props after a POST, with `not_applied` listing the requested settings it does not
    show. (llama-server accepts POST /props with --props but, as of its 2026 builds,
    changes nothing through it: the caller should learn that, not assume success.)"""
    if not isinstance(props, dict):
        return props
    current = props.get("default_generation_settings")
    current = current if isinstance(current, dict) else {}
    shown = {**current, **(current.get("params") or {})}
    missed = {key: value for key, value in requested.items() if shown.get(key) != value}
    if not missed:
        return props
    note = (
        "llama-server accepted the change but does not show these settings; pass them with"
        " each request (llama_complete / llama_chat) instead"
    )
    return {**props, "not_applied": missed, "note": note}


def tokenize_result(answer: Any) -> dict[str, Any]:
    raw = _field(answer, "tokens", "/tokenize")
    tokens: list[int] = []
    pieces: list[str] = []
    with _unexpected(answer, "/tokenize"):
        for item in raw:
            if isinstance(item, dict):
                tokens.append(int(item["id"]))
                piece = item.get("piece", "")
                is_bytes = isinstance(piece, list)  # a piece that is not valid UTF-8
                pieces.append(bytes(piece).decode("utf-8", "replace") if is_bytes else piece)
            else:
                tokens.append(int(item))
    result: dict[str, Any] = {"tokens": tokens, "count": len(tokens)}
    if pieces:
        result["pieces"] = pieces
    return result


def embedding_result(answer: Any) -> dict[str, Any]:
    """{embedding: [float], dimensions}; with pooling `none` (one vector per token),
    {embeddings: [[float]], dimensions, tokens}."""
    if isinstance(answer, list):
        if not answer:
            raise LlamaServerError("llama-server returned no embedding for the text")
        answer = answer[0]
    vectors = _field(answer, "embedding", "/embedding")
    if vectors and isinstance(vectors[0], list):
        if len(vectors) > 1:
            return {
                "embeddings": vectors,
                "dimensions": len(vectors[0]),
                "tokens": len(vectors),
                "pooling": "none",
            }
        vectors = vectors[0]
    return {"embedding": vectors, "dimensions": len(vectors)}


def rerank_result(answer: Any, documents: list[str]) -> dict[str, Any]:
    """{results: [{index, relevance_score, document}]}, most relevant first."""
    raw = answer if isinstance(answer, list) else _field(answer, "results", "/reranking")
    with _unexpected(answer, "/reranking"):
        pairs = [(float(item["relevance_score"]), int(item["index"])) for item in raw]
    scored = sorted(pairs, key=lambda pair: (-pair[0], pair[1]))  # ties in document order
    results = [
        {
            "index": index,
            "relevance_score": score,
            "document": documents[index] if 0 <= index < len(documents) else None,
        }
        for score, index in scored
    ]
    return {"results": results}


def _field(answer: Any, key: str, path: str) -> Any:
    if not isinstance(answer, dict) or not isinstance(answer.get(key), list):
        raise LlamaServerError(
            f"llama-server's answer to {path} has no {key!r} list: {str(answer)[:200]}"
        )
    return answer[key]


@contextmanager
def _unexpected(answer: Any, path: str) -> Iterator[None]:
    """An answer whose items are not what llama-server documents: an error that shows it."""
    try:
        yield
    except (KeyError, TypeError, ValueError) as exc:
        raise LlamaServerError(
            f"llama-server's answer to {path} is not in a shape farmhand knows ({exc!r}):"
            f" {str(answer)[:200]}"
        ) from None
