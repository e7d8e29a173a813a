"""What every store database is, whichever engine holds it: the `Database` the stores
call, a statement's `Result`, and where PostgreSQL's migrations are (their own module:
`database` opens SQLite or PostgreSQL, and `postgres` builds on these)."""

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


class Executor(Protocol):
    def execute(self, sql: str, params: Sequence[Any] = ()) -> Result: ...

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None: ...


class Database:
    """One store's database: `execute` runs one statement on its own, `transaction()`
    several as one."""

    dialect: Dialect
    replica: int | None = None
    """This process among the replicas that share the database (None: it is not shared)."""

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Result:
        with self.transaction() as tx:
            return tx.execute(sql, params)

    def replica_alive(self, replica: int) -> bool:
        """Whether the replica `replica` still runs (a store no other process shares: yes)."""
        return True

    @contextmanager
    def transaction(self) -> Iterator[Executor]:
        raise NotImplementedError
        yield  # pragma: no cover

    def close(self) -> None:
        raise NotImplementedError
