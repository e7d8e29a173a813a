"""Every chat is a task: an id, a status, timestamps, kept in SQLite under FARMHAND_HOME.

Ollama's MCP API calls these A2A tasks: a response carries `task_id` and `task_status`
(working while the loop runs, then completed or failed), a client may name its own
`task_id`, and `GET /api/tasks/{id}` reports one later, also after a restart.

The store does quick synchronous single-row statements (well under a millisecond) on
SQLite or PostgreSQL (`service/database.py`, `server.store`). On PostgreSQL a task with
an id of the store's own making is started and finished without waiting for the database
(`Database.send`: a thread writes them in order), since the row holds exactly what `start`
and `finish` return; a reader (`get`) waits for what was sent first, and a request that
must not answer before its task is written awaits `written()`.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal, cast

from farmhand.service.database import open_database
from farmhand.service.database_types import Database

TaskStatus = Literal["working", "completed", "failed"]
TASK_STATUSES: tuple[TaskStatus, ...] = ("working", "completed", "failed")
DATABASE_NAME = "tasks.sqlite3"
MAX_TASK_ID_LENGTH = 200
INTERRUPTED = "the server stopped before this task finished; send the request again"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS tasks (
    id TEXT PRIMARY KEY,
    status TEXT NOT NULL,
    model TEXT NOT NULL,
    dialect TEXT NOT NULL,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL,
    error TEXT
)
"""

# Statements hand the row back (RETURNING: one round trip, not two, on PostgreSQL).
_COLUMNS = "id, status, model, dialect, created_at, updated_at, error"
_START = (
    "INSERT INTO tasks (id, status, model, dialect, created_at, updated_at, error)"
    " VALUES (?, 'working', ?, ?, ?, ?, NULL)"
    " ON CONFLICT(id) DO UPDATE SET status='working', model=excluded.model,"
    " dialect=excluded.dialect, updated_at=excluded.updated_at, error=NULL"
    f" RETURNING {_COLUMNS}"
)
_START_SHARED = (  # the replica that runs it, too
    "INSERT INTO tasks (id, status, model, dialect, created_at, updated_at, error, replica)"
    " VALUES (?, 'working', ?, ?, ?, ?, NULL, ?)"
    " ON CONFLICT(id) DO UPDATE SET status='working', model=excluded.model,"
    " dialect=excluded.dialect, updated_at=excluded.updated_at, error=NULL,"
    f" replica=excluded.replica RETURNING {_COLUMNS}"
)

_FINISH = "UPDATE tasks SET status=?, updated_at=?, error=? WHERE id=?"


def new_task_id() -> str:
    return str(uuid.uuid4())


def iso_time(timestamp: float) -> str:
    """RFC 3339 in UTC with microseconds, as Ollama writes `created_at`."""
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(timestamp)) + (
        f".{int(timestamp % 1 * 1_000_000):06d}Z"
    )


@dataclass(frozen=True)
class Task:
    id: str
    status: TaskStatus
    model: str
    dialect: str
    created_at: float
    updated_at: float
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "task_id": self.id,
            "task_status": self.status,
            "model": self.model,
            "dialect": self.dialect,
            "created_at": iso_time(self.created_at),
            "updated_at": iso_time(self.updated_at),
            "error": self.error,
        }


class TaskStore:
    """Tasks in one SQLite file, or in `store`'s PostgreSQL database.
    `TaskStore.in_home(home, store)` is the server's."""

    def __init__(self, path: Path, store: str | None = None) -> None:
        self.path = path
        self._db: Database = open_database(path, store)
        self._sent: dict[str, Task] = {}  # started by `send`, not finished yet
        if self._db.dialect == "sqlite":  # PostgreSQL's tables come from its migrations
            self._db.execute(_SCHEMA)

    @property
    def shared(self) -> bool:
        """Other server processes (replicas) use the same tasks."""
        return self._db.dialect != "sqlite"

    def ping(self) -> None:
        """One trivial statement: raises when the database cannot answer (`/ready`)."""
        self._db.execute("SELECT 1")

    @classmethod
    def in_home(cls, home: Path, store: str | None = None) -> TaskStore:
        return cls(home / DATABASE_NAME, store)

    def fail_unfinished(self) -> int:
        """Mark tasks still working as failed: a server calls this when it starts, since a
        task its previous run left working will never finish now. Returns how many. In a
        shared store, only those of replicas that no longer run (others' are still running)."""
        self._db.flush()
        if self.shared:
            rows = self._db.execute(
                "SELECT DISTINCT replica FROM tasks WHERE status='working' AND replica IS NOT NULL"
            ).rows
            return sum(self._fail_if_gone(replica) for (replica,) in rows)
        cursor = self._db.execute(
            "UPDATE tasks SET status='failed', updated_at=?, error=? WHERE status='working'",
            (time.time(), INTERRUPTED),
        )
        return cursor.rowcount

    def _fail_if_gone(self, replica: int, task_id: str | None = None) -> int:
        """Fail the working tasks (or the one task) of `replica` if it no longer runs."""
        if replica == self._db.replica or self._db.replica_alive(replica):
            return 0
        one = " AND id=?" if task_id is not None else ""
        cursor = self._db.execute(
            "UPDATE tasks SET status='failed', updated_at=?, error=?"
            f" WHERE status='working' AND replica=?{one}",
            (time.time(), INTERRUPTED, replica, *([task_id] if task_id is not None else [])),
        )
        return cursor.rowcount

    def start(self, task_id: str | None, model: str, dialect: str) -> Task:
        """A task in status working: a new one, or the client's own `task_id` again (its
        creation time kept, its error cleared); in a shared store, marked as this replica's."""
        now = time.time()
        if self.shared and task_id is None:  # a new row, exactly this: sent, not waited for
            task = Task(new_task_id(), "working", model, dialect, now, now)
            self._db.send(_START_SHARED, (task.id, model, dialect, now, now, self._db.replica))
            self._sent[task.id] = task
            return task
        task_id = task_id or new_task_id()
        self._db.flush()
        if self.shared:
            row = self._db.execute(
                _START_SHARED, (task_id, model, dialect, now, now, self._db.replica)
            ).one()
        else:
            row = self._db.execute(_START, (task_id, model, dialect, now, now)).one()
        assert row is not None
        return _task(row)

    def finish(self, task_id: str, error: str | None = None) -> Task | None:
        """Completed, or failed with `error`."""
        status: TaskStatus = "failed" if error is not None else "completed"
        now = time.time()
        sent = self._sent.pop(task_id, None)
        if sent is not None:  # its row is this store's own: sent after its start
            self._db.send(_FINISH, (status, now, error, task_id))
            return replace(sent, status=status, updated_at=now, error=error)
        self._db.flush()
        row = self._db.execute(
            f"{_FINISH} RETURNING {_COLUMNS}",
            (status, now, error, task_id),
        ).one()
        return None if row is None else _task(row)

    def get(self, task_id: str) -> Task | None:
        """The task; in a shared store, one whose replica died while it worked is failed
        first (it will never finish)."""
        self._db.flush()
        replica = ", replica" if self.shared else ""
        row = self._db.execute(
            f"SELECT {_COLUMNS}{replica} FROM tasks WHERE id=?",
            (task_id,),
        ).one()
        if row is None:
            return None
        foreign = replica and row[1] == "working" and row[7] is not None
        if foreign and self._fail_if_gone(row[7], task_id):
            return self.get(task_id)
        return _task(row)

    def flush(self) -> None:
        """Return once every task row started or finished so far is written."""
        self._db.flush()

    async def written(self) -> None:
        """Return once every task row started or finished so far is written (the other
        replicas see it), without blocking the event loop."""
        await self._db.written()

    def close(self) -> None:
        self._db.close()  # what was sent is written first


def _task(row: tuple[Any, ...]) -> Task:
    status = row[1] if row[1] in TASK_STATUSES else "failed"
    return Task(row[0], cast(TaskStatus, status), row[2], row[3], row[4], row[5], row[6])
