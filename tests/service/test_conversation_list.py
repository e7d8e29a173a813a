"""`ResponseStore.conversations`: the stored responses that end a conversation, newest
first, each titled by the first thing its user wrote."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from farmhand.service.responses_store import ResponseStore


def said(text: str) -> dict[str, Any]:
    return {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}


def response(response_id: str, previous: str | None = None) -> dict[str, Any]:
    return {"id": response_id, "previous_response_id": previous, "output": []}


def test_only_the_last_response_of_each_conversation_is_listed(tmp_path: Path) -> None:
    store = ResponseStore(tmp_path / "farmhand.db")
    store.put(response("resp_a1"), [said("Plough the field")], "farm")
    store.put(response("resp_b1"), [{"role": "user", "content": "Feed the hens"}], "farm")
    store.put(
        response("resp_a2", previous="resp_a1"),
        [said("Plough the field"), said("And the next one")],
        "other",
    )
    listed = store.conversations(10)
    assert [(c["id"], c["title"], c["turns"], c["model"]) for c in listed] == [
        ("resp_a2", "Plough the field", 2, "other"),
        ("resp_b1", "Feed the hens", 1, "farm"),
    ]
    assert [c["id"] for c in store.conversations(1)] == ["resp_a2"]
    store.close()


def test_an_empty_store_lists_nothing(tmp_path: Path) -> None:
    store = ResponseStore(tmp_path / "farmhand.db")
    assert store.conversations(5) == []
    store.close()
