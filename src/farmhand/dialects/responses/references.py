"""`item_reference` input items of a Responses request, replaced by the stored items they
name, within the bounds of `server.limits`.

A reference is small and the item it names may be large, and one request may name the same
item many times: 1,000 references to a 1 MB item once took a server up by 947 MiB. So the
references are counted, and the sizes of the items they name (kept in the store's index)
are added up, before any item is read; each named item is then read once, however often it
is named (and each stored response that holds one, once).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Protocol

from farmhand.config.limits import LimitsConfig
from farmhand.errors import RequestError


class StoredItems(Protocol):
    """What the store offers to resolve references (`service.responses_store`)."""

    def item_sizes(self, item_ids: Iterable[str]) -> dict[str, int]: ...

    def items(self, item_ids: Iterable[str]) -> dict[str, dict[str, Any]]: ...


def resolve_references(
    items: list[dict[str, Any]], store: StoredItems, limits: LimitsConfig
) -> list[dict[str, Any]]:
    """The input with each `item_reference` (`{"type": "item_reference", "id": ...}`, or an
    item with only an `id`) replaced by the stored item of that id. RequestError for a
    reference without an id or to no stored item, and for more references, or more
    characters behind them, than `limits` allows."""
    named = _references(items)
    if not named:
        return items
    if len(named) > limits.max_item_references:
        raise RequestError(
            f"input holds {len(named)} item_reference items; at most"
            f" {limits.max_item_references} are resolved per request (the server's"
            " server.limits.max_item_references): send fewer, or send the items themselves",
            param="input",
        )
    distinct = list(dict.fromkeys(named.values()))
    sizes = store.item_sizes(distinct)
    for index, item_id in named.items():
        if item_id not in sizes:
            raise _unknown(index, item_id)
    total = sum(sizes[item_id] for item_id in named.values())
    if total > limits.max_reference_chars:
        raise RequestError(
            f"the item_reference items of input expand to {total} characters of stored"
            f" items; at most {limits.max_reference_chars} are allowed per request (the"
            " server's server.limits.max_reference_chars): name each item once, or fewer",
            param="input",
        )
    found = store.items(distinct)
    for index, item_id in named.items():
        if item_id not in found:  # deleted since its size was read
            raise _unknown(index, item_id)
    return [found[named[i]] if i in named else item for i, item in enumerate(items)]


def _references(items: list[dict[str, Any]]) -> dict[int, str]:
    """The position of each reference in `items`, with the id it names."""
    named: dict[int, str] = {}
    for index, item in enumerate(items):
        kind = item.get("type")
        typeless_id = kind is None and "role" not in item and "id" in item
        if kind != "item_reference" and not typeless_id:
            continue
        item_id = item.get("id")
        if not isinstance(item_id, str) or not item_id:
            raise RequestError(
                f'input[{index}] is an item_reference without an "id"; write'
                ' {"type": "item_reference", "id": "<the id of a stored item>"}',
                param="input",
            )
        named[index] = item_id
    return named


def _unknown(index: int, item_id: str) -> RequestError:
    return RequestError(
        f"input[{index}]: item_reference {item_id!r} names no stored item; only the"
        " items of responses made with store=true are kept (30 days, until deleted):"
        " send the item itself instead",
        param="input",
    )
