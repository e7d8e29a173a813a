"""What every store database is, whichever engine holds it: the `Database` the stores
call, a statement's `Result`, a `Write` of several sent together, and where PostgreSQL's
migrations are (their own module: `database` opens SQLite or PostgreSQL, and `postgres`
builds on these)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol

Dialect = Literal["sqlite", "postgresql"]
MIGRATIONS = Path(__file__).parent / "migrations"


@dataclass(frozen=True)
class Result:
    rows: list[tuple[Any, ...]]
    rowcount: int

    def one(self) -> tuple[Any, ...] | None:
        return self.rows[0] if self.rows else None


@dataclass(frozen=True)
class Write:
    """One statement of `Database.write`, run once for each row of parameters in `rows`
    (none: not run)."""

    sql: str
    rows: Sequence[Sequence[Any]]


class Executor(Protocol):
    def execute(self, sql: str, params: Sequence[Any] = ()) -> Result: ...

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> int:
        """`sql` once per row of `rows`; how many rows they changed in all."""
        ...


class Database:
    """One store's database: `execute` runs one statement on its own, `transaction()`
    several as one."""

    dialect: Dialect
    replica: int | None = None
    """This process among the replicas that share the database (None: it is not shared)."""

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Result:
        with self.transaction() as tx:
            return tx.execute(sql, params)

    def write(self, writes: Sequence[Write]) -> list[int]:
        """Run `writes` in order as one transaction whose rows nobody reads back; how many
        rows each changed. PostgreSQL sends them all at once (one round trip)."""
        with self.transaction() as tx:
            return [run_write(tx, write) for write in writes]

    def send(self, sql: str, params: Sequence[Any] = ()) -> None:
        """Run `sql` after everything sent before it, without waiting for it where the
        database is another server's (`write_behind.py`); here, at once."""
        self.execute(sql, params)

    def flush(self) -> None:
        """Return once everything `send` sent is written (a reader calls it first)."""

    async def written(self) -> None:
        """`flush` without blocking the event loop."""

    def replica_alive(self, replica: int) -> bool:
        """Whether the replica `replica` still runs (a store no other process shares: yes)."""
        return True

    @contextmanager
    def transaction(self) -> Iterator[Executor]:
        raise NotImplementedError
        yield  # pragma: no cover

    def close(self) -> None:
        raise NotImplementedError


def run_write(tx: Executor, write: Write) -> int:
    """`write` in the transaction `tx`; the rows it changed."""
    if len(write.rows) == 1:
        return tx.execute(write.sql, write.rows[0]).rowcount
    return tx.executemany(write.sql, write.rows) if write.rows else 0
