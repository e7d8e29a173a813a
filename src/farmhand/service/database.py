"""Where the server's stores keep their rows: the SQLite file under FARMHAND_HOME (the
default) or a PostgreSQL database (`server.store: postgresql://...`), which several
`farmhand serve` replicas share so that they behave as one server.

The stores (`tasks.py`, `responses_store.py`, `agent_tasks.py`, `projects.py`) write their
statements once, with `?` placeholders, in the SQL both databases accept (`INSERT ... ON
CONFLICT ... DO UPDATE`, no `INSERT OR REPLACE`); a PostgreSQL table that is listed in
`rowid` order has a `rowid` column of its own. SQLite's tables are created by the stores as
they always were (`CREATE TABLE IF NOT EXISTS`, one shared file per home); PostgreSQL's are
created and migrated by yoyo-migrations from the versioned SQL files in `migrations/`, once
per process when the database is first opened (yoyo's lock keeps two replicas starting
together from applying a migration twice).
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from farmhand.service.database_types import Database, Dialect, Executor, Result

POSTGRESQL_SCHEMES = ("postgresql://", "postgres://")


def is_postgresql(store: str | None) -> bool:
    return bool(store) and str(store).startswith(POSTGRESQL_SCHEMES)


def open_database(path: Path, store: str | None = None) -> Database:
    """The database for `store` (a PostgreSQL URL, shared by the stores that name it), or
    else the SQLite file at `path` (one connection per store, WAL journal)."""
    if store is not None and is_postgresql(store):
        return open_shared_database(store)
    return SqliteDatabase(Path(store) if store else path)


def open_shared_database(url: str) -> Database:
    """The PostgreSQL database at `url`, one pool per process for every store naming it."""
    from farmhand.service.postgres import shared_postgres  # psycopg only when used

    return shared_postgres(url)


def prepare_store(store: str | None) -> None:
    """Create or migrate a shared store's tables now (`farmhand serve` calls this as it
    starts); SQLite's are made by each store as it opens."""
    if store is not None and is_postgresql(store):
        from farmhand.service.postgres import migrate_at_start

        migrate_at_start(store)


class _SqliteExecutor:
    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Result:
        cursor = self.db.execute(sql, params)
        return Result(cursor.fetchall() if cursor.description else [], cursor.rowcount)

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> int:
        return self.db.executemany(sql, rows).rowcount


class SqliteDatabase(Database):
    """The SQLite file at `path` (created if need be): one connection shared by threads
    under a lock, autocommit outside `transaction()`, WAL."""

    dialect: Dialect = "sqlite"

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self.db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")
        self.lock = threading.Lock()

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Result:
        with self.lock:  # one statement: autocommit, no BEGIN needed
            return _SqliteExecutor(self.db).execute(sql, params)

    @contextmanager
    def transaction(self) -> Iterator[Executor]:
        with self.lock:
            self.db.execute("BEGIN")
            try:
                yield _SqliteExecutor(self.db)
            except BaseException:
                self.db.execute("ROLLBACK")
                raise
            self.db.execute("COMMIT")

    def close(self) -> None:
        with self.lock:
            self.db.close()
