"""item_reference input items resolved from what the store keeps, within server.limits:
counted and sized from the index before any item is read, each item read once."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

import pytest

from farmhand.config.limits import LimitsConfig
from farmhand.dialects.responses.references import resolve_references
from farmhand.errors import RequestError

STORED = {
    "fc_1": {"id": "fc_1", "type": "function_call", "call_id": "c", "name": "f", "arguments": "{}"},
    "msg_1": {"id": "msg_1", "type": "message", "role": "assistant", "content": "Hi."},
}
LIMITS = LimitsConfig()


class Store:
    """A store over `STORED` that records what it was asked."""

    def __init__(self) -> None:
        self.read: list[str] = []
        self.sized: list[list[str]] = []

    def item_sizes(self, item_ids: Iterable[str]) -> dict[str, int]:
        wanted = list(item_ids)
        self.sized.append(wanted)
        return {i: len(json.dumps(STORED[i])) for i in wanted if i in STORED}

    def items(self, item_ids: Iterable[str]) -> dict[str, dict[str, Any]]:
        wanted = list(item_ids)
        self.read += wanted
        return {i: STORED[i] for i in wanted if i in STORED}


def test_references_are_replaced_by_the_stored_items_in_place() -> None:
    items: list[dict[str, Any]] = [
        {"role": "user", "content": "hello"},
        {"type": "item_reference", "id": "msg_1"},
        {"id": "fc_1"},  # the type of a reference may be left out
        {"type": "function_call_output", "call_id": "c", "output": "ok", "id": "fco_1"},
    ]
    assert resolve_references(items, Store(), LIMITS) == [
        items[0],
        STORED["msg_1"],
        STORED["fc_1"],
        items[3],
    ]


def test_an_unknown_reference_names_its_id() -> None:
    with pytest.raises(RequestError) as caught:
        resolve_references([{"type": "item_reference", "id": "msg_gone"}], Store(), LIMITS)
    assert caught.value.param == "input"
    assert "input[0]: item_reference 'msg_gone' names no stored item" in str(caught.value)
    with pytest.raises(RequestError, match='without an "id"'):
        resolve_references([{"type": "item_reference"}], Store(), LIMITS)


def test_items_without_references_never_ask_the_store() -> None:
    store = Store()
    items: list[dict[str, Any]] = [{"role": "user", "content": "x"}, {"content": "y"}]
    assert resolve_references(items, store, LIMITS) == items
    assert store.sized == [] and store.read == []


def test_an_item_named_many_times_is_read_once() -> None:
    store = Store()
    items = [{"type": "item_reference", "id": "msg_1"}] * 50
    assert resolve_references(items, store, LIMITS) == [STORED["msg_1"]] * 50
    assert store.read == ["msg_1"]


def test_too_many_references_are_refused_before_the_store_is_asked() -> None:
    store = Store()
    items = [{"type": "item_reference", "id": "msg_1"}] * 4
    with pytest.raises(RequestError) as caught:
        resolve_references(items, store, LimitsConfig(max_item_references=3))
    message = str(caught.value)
    assert "4 item_reference items" in message and "at most 3" in message
    assert "server.limits.max_item_references" in message
    assert caught.value.status == 400 and caught.value.param == "input"
    assert store.sized == [] and store.read == []


def test_references_that_expand_too_far_are_refused_before_any_item_is_read() -> None:
    store = Store()
    size = len(json.dumps(STORED["msg_1"]))
    items = [{"type": "item_reference", "id": "msg_1"}] * 3
    with pytest.raises(RequestError) as caught:
        resolve_references(items, store, LimitsConfig(max_reference_chars=3 * size - 1))
    message = str(caught.value)
    assert f"expand to {3 * size} characters" in message
    assert "server.limits.max_reference_chars" in message
    assert store.read == []
    assert resolve_references(items, store, LimitsConfig(max_reference_chars=3 * size))
