"""The stores on PostgreSQL (`server.store: postgresql://user@host:port/db`): a psycopg 3
connection pool per URL, shared by the stores of a process, its schema brought up to date
by yoyo-migrations when it is first opened.

Each process that opens the database is a replica with a random id, and holds a session-level
advisory lock on it for as long as it lives, on a connection of its own: when a replica dies,
even by kill -9, PostgreSQL ends its session and the lock goes, so the others can tell its
unfinished work will never finish (`replica_alive`) without a heartbeat of their own.

yoyo rather than alembic: its migrations are plain SQL files with an order and a lock
table, it drives psycopg 3 directly, and it needs no ORM or SQLAlchemy engine, which
farmhand has nowhere else.
"""

from __future__ import annotations

import functools
import secrets
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import psycopg
from psycopg_pool import ConnectionPool
from yoyo import get_backend, read_migrations

from farmhand.config.env import mask_secrets
from farmhand.errors import ConfigError
from farmhand.service.database_types import (
    MIGRATIONS,
    Database,
    Dialect,
    Executor,
    Result,
    Write,
)
from farmhand.service.write_behind import WriteBehind

POOL_SIZE = 8
CONNECT_TIMEOUT = 10.0
# The advisory locks' first key: farmhand's replicas, apart from other users of the database.
REPLICA_LOCKS = 0x66686E64  # "fhnd"
_shared: dict[str, PostgresDatabase] = {}
_shared_lock = threading.Lock()


@functools.lru_cache(maxsize=256)  # the stores' statements are a few fixed texts
def placeholders(sql: str) -> str:
    """The stores' `?` placeholders as psycopg's `%s` (their statements hold no `%`)."""
    return sql.replace("%", "%%").replace("?", "%s")


def migrate(url: str) -> list[str]:
    """Apply the migrations `url`'s database lacks (under yoyo's lock); their ids."""
    backend = get_backend(
        url.replace("postgresql://", "postgresql+psycopg://", 1).replace(
            "postgres://", "postgresql+psycopg://", 1
        )
    )
    try:
        migrations = read_migrations(str(MIGRATIONS / "postgresql"))
        with backend.lock():
            pending = backend.to_apply(migrations)
            backend.apply_migrations(pending)
        return [m.id for m in pending]
    finally:
        backend.connection.close()


class _PgExecutor:
    def __init__(self, conn: psycopg.Connection[Any]) -> None:
        self.conn = conn

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Result:
        cursor = self.conn.execute(placeholders(sql), params)
        rows = cursor.fetchall() if cursor.description else []
        return Result(rows, cursor.rowcount)

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> int:
        with self.conn.cursor() as cursor:
            cursor.executemany(placeholders(sql), rows)
            return cursor.rowcount


class PostgresDatabase(Database):
    dialect: Dialect = "postgresql"

    def __init__(self, url: str) -> None:
        self.url = url
        self.users = 0
        self.pool = ConnectionPool(
            url,
            min_size=1,
            max_size=POOL_SIZE,
            kwargs={"autocommit": True},
            open=False,
            name="farmhand-store",
        )
        self.pool.open(wait=True, timeout=CONNECT_TIMEOUT)
        self.replica = secrets.randbits(31)
        try:
            self._liveness = psycopg.connect(
                url, autocommit=True, connect_timeout=int(CONNECT_TIMEOUT)
            )
            self._liveness.execute("SELECT pg_advisory_lock(%s, %s)", (REPLICA_LOCKS, self.replica))
        except BaseException:
            self.pool.close()
            raise
        self.behind = WriteBehind(self.write, name="farmhand-store-writes")

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Result:
        with self.pool.connection() as conn:
            return _PgExecutor(conn).execute(sql, params)

    @contextmanager
    def transaction(self) -> Iterator[Executor]:
        with self.pool.connection() as conn, conn.transaction():
            yield _PgExecutor(conn)

    def write(self, writes: Sequence[Write]) -> list[int]:
        """Every statement sent before any answer is awaited (psycopg's pipeline mode): one
        round trip, where a transaction of its own costs one per statement and two more for
        BEGIN and COMMIT. The statements up to the pipeline's one Sync are one implicit
        transaction: PostgreSQL commits them together at the Sync, or rolls back all of them
        when one fails (psycopg raises that failure as the pipeline ends). One statement
        is simply run (autocommit): the pipeline's own work would cost more than it saves."""
        if len(writes) == 1 and len(writes[0].rows) == 1:
            return [self.execute(writes[0].sql, writes[0].rows[0]).rowcount]
        with self.pool.connection() as conn, conn.pipeline():
            cursors = [conn.cursor() for _ in writes]
            for cursor, write in zip(cursors, writes, strict=True):
                if write.rows:
                    cursor.executemany(placeholders(write.sql), write.rows)
        pairs = zip(cursors, writes, strict=True)
        return [cursor.rowcount if write.rows else 0 for cursor, write in pairs]

    def send(self, sql: str, params: Sequence[Any] = ()) -> None:
        self.behind.send(sql, params)

    def flush(self) -> None:
        self.behind.flush()

    async def written(self) -> None:
        await self.behind.written()

    def replica_alive(self, replica: int) -> bool:
        """Whether `replica` still holds its lock (this process holds its own, on another
        session, so it is alive to itself too)."""
        with self.pool.connection() as conn, conn.transaction():
            row = conn.execute(
                "SELECT pg_try_advisory_xact_lock(%s, %s)", (REPLICA_LOCKS, replica)
            ).fetchone()
        return not (row and row[0])

    def close(self) -> None:
        with _shared_lock:
            self.users -= 1
            if self.users > 0:
                return
            _shared.pop(self.url, None)
        self.behind.close()  # what was sent is written before the pool goes
        self.pool.close()
        self._liveness.close()


def shared_postgres(url: str) -> PostgresDatabase:
    """The process's pool for `url`, migrated on first open; each store that takes it
    closes it once (the pool closes with the last)."""
    with _shared_lock:
        database = _shared.get(url)
        if database is None:
            try:
                migrate(url)
                database = PostgresDatabase(url)
            except Exception as exc:  # psycopg's, the pool's timeout, yoyo's: all say why
                raise unusable(exc) from exc
            _shared[url] = database
        database.users += 1
        return database


def migrate_at_start(url: str) -> None:
    """`farmhand serve`'s first step with a shared store: its tables are created or
    migrated before any request, and a database it cannot use stops it with a clear error."""
    try:
        migrate(url)
    except Exception as exc:
        raise unusable(exc) from exc


def unusable(exc: BaseException) -> ConfigError:
    return ConfigError(
        f"server.store: cannot use the PostgreSQL database ({_safe(exc)});"
        " check that the server is running, the URL's user, host, port and"
        " database name, and that the user may create tables there"
    )


def _safe(exc: BaseException) -> str:
    """The error's first line, without the password a connection string may carry."""
    return str(mask_secrets(str(exc).splitlines()[0] if str(exc) else type(exc).__name__))
