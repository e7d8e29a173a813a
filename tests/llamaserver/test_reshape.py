"""llama-server answers of every shape its versions have used, made into one."""

from __future__ import annotations

import httpx
import pytest

from farmhand.errors import LlamaServerError
from farmhand.llamaserver.reshape import (
    embedding_result,
    health_result,
    props_after_change,
    rerank_result,
    tokenize_result,
)


@pytest.mark.parametrize(
    "answer",
    [
        {"embedding": [0.5, 0.25]},  # before 2025
        [{"index": 0, "embedding": [[0.5, 0.25]]}],  # pooled, since
        [{"index": 0, "embedding": [0.5, 0.25]}],
    ],
)
def test_one_pooled_vector(answer: object) -> None:
    assert embedding_result(answer) == {"embedding": [0.5, 0.25], "dimensions": 2}


def test_vectors_per_token_stay_per_token() -> None:
    answer = [{"index": 0, "embedding": [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]}]
    assert embedding_result(answer) == {
        "embeddings": [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]],
        "dimensions": 2,
        "tokens": 3,
        "pooling": "none",
    }


def test_answers_without_the_expected_list_are_errors() -> None:
    with pytest.raises(LlamaServerError, match="answer to /embedding has no 'embedding' list"):
        embedding_result({"data": []})
    with pytest.raises(LlamaServerError, match="returned no embedding"):
        embedding_result([])
    with pytest.raises(LlamaServerError, match="answer to /tokenize has no 'tokens' list"):
        tokenize_result({"error": "x"})


def test_tokens_without_pieces() -> None:
    assert tokenize_result({"tokens": [1, 2, 3]}) == {"tokens": [1, 2, 3], "count": 3}


def test_rerank_ties_keep_document_order() -> None:
    raw = {"results": [{"index": 0, "relevance_score": 0.5}, {"index": 1, "relevance_score": 0.9},
                       {"index": 2, "relevance_score": 0.5}]}  # fmt: skip
    ranked = rerank_result(raw, ["a", "b", "c"])["results"]
    assert [(r["index"], r["document"]) for r in ranked] == [(1, "b"), (0, "a"), (2, "c")]


def test_health_while_loading_and_without_slots() -> None:
    loading = httpx.Response(503, json={"error": {"code": 503, "message": "Loading model"}})
    assert health_result("http://h", loading, None) == {
        "status": "loading_model", "url": "http://h", "message": "Loading model",
    }  # fmt: skip
    broken = httpx.Response(500, text="boom")
    assert health_result("http://h", broken, None)["status"] == "error"


def test_props_changes_that_did_not_take_are_named() -> None:
    props = {"default_generation_settings": {"n_ctx": 2048, "params": {"temperature": 0.8}}}
    after = props_after_change(props, {"temperature": 0.1, "n_ctx": 2048})
    assert after["not_applied"] == {"temperature": 0.1}
    assert "pass them with each request" in after["note"]
    assert props_after_change(props, {"temperature": 0.8}) == props


def test_items_of_an_unknown_shape_are_errors_that_show_the_answer() -> None:
    with pytest.raises(LlamaServerError, match=r"answer to /reranking is not in a shape.*'score'"):
        rerank_result({"results": [{"i": 0, "score": 1}]}, ["a"])
    with pytest.raises(LlamaServerError, match="answer to /tokenize is not in a shape"):
        tokenize_result({"tokens": [{"piece": "x"}]})
