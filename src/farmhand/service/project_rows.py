"""Projects written through the API, as rows of a shared PostgreSQL database
(`server.store: postgresql://...`), so every replica serves the same ones. `projects.py`
reads a row before the file of the same name (an operator's file on disk still counts).
The rows hold the file's text exactly as `projects.ProjectStore` would have written it.
"""

from __future__ import annotations

import threading
from pathlib import Path

from farmhand.service.database import is_postgresql, open_database
from farmhand.service.database_types import Database

_opened: dict[str, Database] = {}
_opened_lock = threading.Lock()


class ProjectRows:
    def __init__(self, db: Database) -> None:
        self.db = db

    @classmethod
    def for_store(cls, store: str | None) -> ProjectRows | None:
        """The rows of `store`'s database when it is PostgreSQL (else projects are files).
        One pool per process, kept open with it: a store is made per request."""
        if store is None or not is_postgresql(store):
            return None
        with _opened_lock:
            if store not in _opened:
                _opened[store] = open_database(Path(), store)
            return cls(_opened[store])

    def read(self, namespace: str, name: str) -> str | None:
        row = self.db.execute(
            "SELECT text FROM projects WHERE namespace=? AND name=?", (namespace, name)
        ).one()
        return str(row[0]) if row is not None else None

    def insert(self, namespace: str, name: str, text: str) -> bool:
        """False when the name is taken (another replica may have won the race)."""
        inserted = self.db.execute(
            "INSERT INTO projects (namespace, name, text) VALUES (?, ?, ?)"
            " ON CONFLICT (namespace, name) DO NOTHING",
            (namespace, name, text),
        )
        return inserted.rowcount == 1

    def put(self, namespace: str, name: str, text: str) -> None:
        self.db.execute(
            "INSERT INTO projects (namespace, name, text) VALUES (?, ?, ?)"
            " ON CONFLICT (namespace, name) DO UPDATE SET text=excluded.text",
            (namespace, name, text),
        )

    def delete(self, namespace: str, name: str) -> bool:
        deleted = self.db.execute(
            "DELETE FROM projects WHERE namespace=? AND name=?", (namespace, name)
        )
        return deleted.rowcount > 0

    def namespaces(self) -> set[str]:
        return {str(r[0]) for r in self.db.execute("SELECT DISTINCT namespace FROM projects").rows}

    def names(self, namespace: str) -> set[str]:
        rows = self.db.execute("SELECT name FROM projects WHERE namespace=?", (namespace,)).rows
        return {str(r[0]) for r in rows}
