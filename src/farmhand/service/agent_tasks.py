"""The whole record of an agent task (A2A's Task: status, history, artifacts), as one
opaque document per task (the A2A face stores the Task's protobuf bytes: a JSON text cost
it a fifth of a request's CPU in a profile), kept beside the task records
(`tasks.DATABASE_NAME`, or `server.store`'s PostgreSQL database) in a table of its own.

The A2A face (`farmhand.a2aserver`) writes a document on every change of its task and
reads it back for `GetTask`, `ListTasks` and a message that continues a task. Each one
belongs to the client that made it (`owner`: a digest of its API key, "" on a server
without keys): a client never reads or writes another's. Rows are listed newest status
first, then by id, so a page token can name the last row of a page.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from farmhand.service.database import open_database
from farmhand.service.database_types import Database
from farmhand.service.tasks import DATABASE_NAME

_SCHEMA = """
CREATE TABLE IF NOT EXISTS agent_tasks (
    id TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    context_id TEXT NOT NULL,
    state TEXT NOT NULL,
    status_ns INTEGER,
    document BLOB NOT NULL
)
"""
_INDEX = (
    "CREATE INDEX IF NOT EXISTS agent_tasks_by_owner"
    " ON agent_tasks (owner, context_id, status_ns, id)"
)


@dataclass(frozen=True)
class AgentTaskRow:
    id: str
    context_id: str
    state: str
    status_ns: int | None
    document: bytes


@dataclass(frozen=True)
class AgentTaskQuery:
    """Which of an owner's tasks to list: all of them, or those of one context, in one
    state, or with a status set at `since_ns` or later; `after` is the (status_ns, id)
    of the last row of the previous page."""

    context_id: str = ""
    state: str = ""
    since_ns: int | None = None
    after: tuple[int | None, str] | None = None


class AgentTaskStore:
    """Agent task documents in one SQLite file, or in `store`'s PostgreSQL database;
    `AgentTaskStore.in_home(home, store)` is the server's."""

    def __init__(self, path: Path, store: str | None = None) -> None:
        self.path = path
        self._db: Database = open_database(path, store)
        if self._db.dialect == "sqlite":  # PostgreSQL's tables come from its migrations
            self._db.execute(_SCHEMA)
            self._db.execute(_INDEX)

    @classmethod
    def in_home(cls, home: Path, store: str | None = None) -> AgentTaskStore:
        return cls(home / DATABASE_NAME, store)

    def put(self, owner: str, row: AgentTaskRow) -> None:
        """Write the task's document; a task id another owner holds is left alone."""
        self._db.execute(
            "INSERT INTO agent_tasks (id, owner, context_id, state, status_ns, document)"
            " VALUES (?, ?, ?, ?, ?, ?)"
            " ON CONFLICT(id) DO UPDATE SET context_id=excluded.context_id,"
            " state=excluded.state, status_ns=excluded.status_ns,"
            " document=excluded.document WHERE agent_tasks.owner=excluded.owner",
            (row.id, owner, row.context_id, row.state, row.status_ns, row.document),
        )

    def get(self, owner: str, task_id: str) -> AgentTaskRow | None:
        found = self._db.execute(
            "SELECT id, context_id, state, status_ns, document FROM agent_tasks"
            " WHERE id=? AND owner=?",
            (task_id, owner),
        ).one()
        return _row(found) if found is not None else None

    def delete(self, owner: str, task_id: str) -> None:
        self._db.execute("DELETE FROM agent_tasks WHERE id=? AND owner=?", (task_id, owner))

    def list(self, owner: str, query: AgentTaskQuery, limit: int) -> tuple[list[AgentTaskRow], int]:
        """One page of the owner's tasks that match `query` (newest status first), and how
        many match in all."""
        where = ["owner=?"]
        values: list[object] = [owner]
        if query.context_id:
            where.append("context_id=?")
            values.append(query.context_id)
        if query.state:
            where.append("state=?")
            values.append(query.state)
        if query.since_ns is not None:
            where.append("status_ns>=?")
            values.append(query.since_ns)
        clause = " AND ".join(where)
        page_where, page_values = clause, list(values)
        if query.after is not None:
            after, after_values = _after(*query.after)
            page_where += f" AND {after}"
            page_values += after_values
        order = "ORDER BY status_ns IS NULL, status_ns DESC, id DESC"
        with self._db.transaction() as tx:
            counted = tx.execute(f"SELECT COUNT(*) FROM agent_tasks WHERE {clause}", values).one()
            rows = tx.execute(
                "SELECT id, context_id, state, status_ns, document FROM agent_tasks"
                f" WHERE {page_where} {order} LIMIT ?",
                [*page_values, limit],
            ).rows
        return [_row(r) for r in rows], int(counted[0] if counted else 0)

    def in_context(self, owner: str, context_id: str, limit: int) -> Sequence[AgentTaskRow]:
        """The owner's last `limit` tasks of one context, oldest first (a conversation)."""
        rows = self._db.execute(
            "SELECT id, context_id, state, status_ns, document FROM agent_tasks"
            " WHERE owner=? AND context_id=? ORDER BY rowid DESC LIMIT ?",
            (owner, context_id, limit),
        ).rows
        return [_row(r) for r in reversed(rows)]

    def close(self) -> None:
        self._db.close()


def _row(found: tuple[object, ...]) -> AgentTaskRow:
    """A row as the A2A face reads it (BYTEA and BLOB alike as bytes)."""
    task_id, context_id, state, status_ns, document = found
    assert isinstance(document, bytes | memoryview)
    return AgentTaskRow(
        str(task_id),
        str(context_id),
        str(state),
        None if status_ns is None else int(str(status_ns)),
        bytes(document),
    )


def _after(status_ns: int | None, task_id: str) -> tuple[str, list[object]]:
    """Rows strictly after (status_ns, id) in the listing order: timestamps descending,
    rows without one last, ids descending within a timestamp."""
    if status_ns is None:
        return "(status_ns IS NULL AND id<?)", [task_id]
    return (
        "(status_ns<? OR status_ns IS NULL OR (status_ns=? AND id<?))",
        [status_ns, status_ns, task_id],
    )
