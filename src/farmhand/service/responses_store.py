"""Stored responses: what `store` keeps so a later request can go on from it.

OpenAI's Responses API keeps every response (unless the request says `store: false`) and
lets the next request continue it with `previous_response_id`; Ollama has no such thing,
farmhand does. A stored response is its whole conversation: the input items it was given
(those of the responses before it included) and the response object with its output
items, as JSON. They live beside the tasks (the SQLite file `tasks.DATABASE_NAME`, or
`server.store`'s PostgreSQL database: `service/database.py`), in a table of their own. The ids of
the items a response holds are indexed too, with the length of each one's JSON, so a
request can name one (`item_reference`) and what its references expand to is known before
any item is read.
As OpenAI does, a response is kept for 30 days: older ones are removed when the store
opens.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio

from farmhand.service.database import open_database
from farmhand.service.database_types import Database, Executor, Write, run_write
from farmhand.service.tasks import DATABASE_NAME

KEPT_SECONDS = 30 * 24 * 3600
_LOOKUP_BATCH = 500  # ids per `IN (...)`: far below SQLite's limit on variables

_UPSERT = (
    "INSERT INTO responses (id, model, created_at, input_items, response)"
    " VALUES (?, ?, ?, ?, ?) ON CONFLICT(id) DO UPDATE SET model=excluded.model,"
    " created_at=excluded.created_at, input_items=excluded.input_items,"
    " response=excluded.response"
)
# PostgreSQL: a response and its items' index in one statement, so one round trip and one
# statement's client work (a pipeline of the upsert, the delete and an insert per item cost
# twice the CPU). The delete is read before the insert, so it runs first: an item stored
# again under the same response is a new row, newer (a higher rowid) than any older copy.
_PUT_POSTGRESQL = (
    "WITH stored AS (" + _UPSERT + " RETURNING id),"
    " dropped AS (DELETE FROM response_items WHERE response_id=(SELECT id FROM stored)"
    " RETURNING 1)"
    " INSERT INTO response_items (item_id, response_id, chars)"
    " SELECT item_id, (SELECT id FROM stored), chars"
    " FROM unnest(?::text[], ?::integer[]) AS given(item_id, chars)"
    " WHERE (SELECT count(*) FROM dropped) >= 0"
)
_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    id TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    created_at REAL NOT NULL,
    input_items TEXT NOT NULL,
    response TEXT NOT NULL
)
"""
_ITEMS_SCHEMA = (
    """
CREATE TABLE IF NOT EXISTS response_items (
    item_id TEXT NOT NULL,
    response_id TEXT NOT NULL,
    chars INTEGER,
    PRIMARY KEY (item_id, response_id)
)
""",
    "CREATE INDEX IF NOT EXISTS response_items_by_response ON response_items (response_id)",
)


@dataclass(frozen=True)
class StoredResponse:
    """A response as it was returned, and every input item that led to it."""

    id: str
    model: str
    created_at: float
    input_items: list[dict[str, Any]]
    response: dict[str, Any]

    @property
    def conversation(self) -> list[dict[str, Any]]:
        """The items a request that continues this response starts from."""
        output = self.response.get("output")
        return [*self.input_items, *(output if isinstance(output, list) else [])]

    def item(self, item_id: str) -> dict[str, Any] | None:
        """The item of this conversation with id `item_id`, if it has one."""
        return next((i for i in self.conversation if i.get("id") == item_id), None)


class ResponseStore:
    """Responses in one SQLite file, or in `store`'s PostgreSQL database;
    `ResponseStore.in_home(home, store)` is the server's."""

    def __init__(self, path: Path, store: str | None = None) -> None:
        self.path = path
        self._db: Database = open_database(path, store)
        with self._db.transaction() as tx:
            if self._db.dialect == "sqlite":  # PostgreSQL's tables come from its migrations
                self._sqlite_schema(tx)
            tx.execute("DELETE FROM responses WHERE created_at < ?", (time.time() - KEPT_SECONDS,))
            tx.execute(
                "DELETE FROM response_items WHERE response_id NOT IN (SELECT id FROM responses)"
            )

    def _sqlite_schema(self, tx: Executor) -> None:
        tx.execute(_SCHEMA)
        for statement in _ITEMS_SCHEMA:
            tx.execute(statement)
        columns = {row[1] for row in tx.execute("PRAGMA table_info(response_items)").rows}
        if "chars" not in columns:  # a file from before sizes were indexed
            tx.execute("ALTER TABLE response_items ADD COLUMN chars INTEGER")
            self._reindex(tx)

    @classmethod
    def in_home(cls, home: Path, store: str | None = None) -> ResponseStore:
        return cls(home / DATABASE_NAME, store)

    def put(self, response: dict[str, Any], input_items: list[dict[str, Any]], model: str) -> None:
        """Keep `response` (it has its `id`) with the input items it answered."""
        row = (
            str(response["id"]),
            model,
            time.time(),
            json.dumps(input_items, ensure_ascii=False),
            json.dumps(response, ensure_ascii=False),
        )
        stored = StoredResponse(row[0], model, row[2], input_items, response)
        if self._db.dialect == "postgresql":
            sizes = _item_sizes(stored)
            self._db.execute(_PUT_POSTGRESQL, (*row, list(sizes), list(sizes.values())))
        else:
            self._db.write([Write(_UPSERT, [row]), *_index_writes(stored)])

    async def put_without_blocking(
        self, response: dict[str, Any], input_items: list[dict[str, Any]], model: str
    ) -> None:
        """`put` from the event loop: on a shared store its round trip waits in a worker
        thread, so the loop serves other requests meanwhile (SQLite's local write, a few
        microseconds, stays on the loop: a thread would cost more than it saves)."""
        if self._db.dialect == "sqlite":
            self.put(response, input_items, model)
        else:
            await anyio.to_thread.run_sync(self.put, response, input_items, model)

    def _reindex(self, tx: Executor) -> None:
        tx.execute("DELETE FROM response_items")
        for row in tx.execute(
            "SELECT id, model, created_at, input_items, response FROM responses"
        ).rows:
            stored = StoredResponse(row[0], row[1], row[2], json.loads(row[3]), json.loads(row[4]))
            for write in _index_writes(stored):
                run_write(tx, write)

    def get(self, response_id: str) -> StoredResponse | None:
        row = self._db.execute(
            "SELECT id, model, created_at, input_items, response FROM responses WHERE id=?",
            (response_id,),
        ).one()
        if row is None:
            return None
        return StoredResponse(row[0], row[1], row[2], json.loads(row[3]), json.loads(row[4]))

    def item_sizes(self, item_ids: Iterable[str]) -> dict[str, int]:
        """The length of the JSON of each stored item named in `item_ids` (the copy `item`
        returns), from the index alone: ids that name no stored item are left out."""
        return {item_id: chars for item_id, (_, chars) in self._newest(item_ids).items()}

    def items(self, item_ids: Iterable[str]) -> dict[str, dict[str, Any]]:
        """The stored items named in `item_ids` (each the copy `item` returns), reading each
        response that holds one once; ids that name no stored item are left out."""
        by_response: dict[str, list[str]] = {}
        for item_id, (response_id, _) in self._newest(item_ids).items():
            by_response.setdefault(response_id, []).append(item_id)
        found: dict[str, dict[str, Any]] = {}
        for response_id, ids in by_response.items():
            stored = self.get(response_id)
            for item_id in ids:
                item = stored.item(item_id) if stored is not None else None
                if item is not None:
                    found[item_id] = item
        return found

    def _newest(self, item_ids: Iterable[str]) -> dict[str, tuple[str, int]]:
        """For each id that names a stored item: the newest response holding it, and the
        length of the item's JSON there."""
        newest: dict[str, tuple[str, int]] = {}
        wanted = list(dict.fromkeys(item_ids))
        for start in range(0, len(wanted), _LOOKUP_BATCH):
            batch = wanted[start : start + _LOOKUP_BATCH]
            marks = ", ".join("?" * len(batch))
            rows = self._db.execute(
                "SELECT item_id, response_id, chars FROM response_items"
                f" WHERE item_id IN ({marks}) ORDER BY rowid DESC",
                batch,
            ).rows
            for item_id, response_id, chars in rows:
                newest.setdefault(item_id, (response_id, chars))
        return newest

    def item(self, item_id: str) -> dict[str, Any] | None:
        """The stored item with id `item_id` (an input or output item of a stored response,
        the newest response's copy), or None."""
        rows = self._db.execute(
            "SELECT response_id FROM response_items WHERE item_id=? ORDER BY rowid DESC",
            (item_id,),
        ).rows
        for (response_id,) in rows:
            stored = self.get(response_id)
            found = stored.item(item_id) if stored is not None else None
            if found is not None:
                return found
        return None

    def conversations(self, limit: int, scan: int = 500) -> list[dict[str, Any]]:
        """The newest `limit` conversations among the last `scan` responses: each the
        response that ends it (no later response continues it), newest first, as
        `{id, model, created_at, title, turns}` (title: the first thing the user wrote)."""
        rows = self._db.execute(
            "SELECT id, model, created_at, input_items, response FROM responses"
            " ORDER BY created_at DESC, rowid DESC LIMIT ?",
            (scan,),
        ).rows
        continued: set[str] = set()
        found: list[dict[str, Any]] = []
        for response_id, model, created_at, items_text, response_text in rows:
            previous = json.loads(response_text).get("previous_response_id")
            if isinstance(previous, str):
                continued.add(previous)
            if response_id in continued or len(found) >= limit:
                continue
            items = json.loads(items_text)
            said = [_user_text(item) for item in items]
            said = [text for text in said if text]
            found.append(
                {
                    "id": response_id,
                    "model": model,
                    "created_at": created_at,
                    "title": said[0][:80] if said else "",
                    "turns": len(said),
                }
            )
        return found

    def delete(self, response_id: str) -> bool:
        """Forget a response; False when there was none of that id."""
        deleted, _ = self._db.write(
            [
                Write("DELETE FROM responses WHERE id=?", [(response_id,)]),
                Write("DELETE FROM response_items WHERE response_id=?", [(response_id,)]),
            ]
        )
        return deleted > 0

    def close(self) -> None:
        self._db.close()


def _item_sizes(stored: StoredResponse) -> dict[str, int]:
    """The id of each item of `stored` with the length of its JSON (the first item of an
    id, as `item` finds it)."""
    sizes: dict[str, int] = {}
    for item in stored.conversation:
        item_id = item.get("id")
        if isinstance(item_id, str) and item_id not in sizes:
            sizes[item_id] = len(json.dumps(item, ensure_ascii=False))
    return sizes


def _index_writes(stored: StoredResponse) -> list[Write]:
    """What indexes the items of `stored` by id, each with the length of its JSON."""
    rows = [(item_id, stored.id, chars) for item_id, chars in _item_sizes(stored).items()]
    return [  # deleted first, so each row is newer (a higher rowid) than any older copy's
        Write("DELETE FROM response_items WHERE response_id=?", [(stored.id,)]),
        Write("INSERT INTO response_items (item_id, response_id, chars) VALUES (?, ?, ?)", rows),
    ]


def _user_text(item: dict[str, Any]) -> str:
    """The text of a user's message item, "" for any other item."""
    if item.get("role") != "user":
        return ""
    content = item.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(
            str(part.get("text", "")) for part in content if isinstance(part, dict)
        ).strip()
    return ""
