"""Which replica holds each parked question, in a shared store (`server.store` on
PostgreSQL).

A chat parked on a question (`service.parked`) lives in the memory of the replica that runs
it: its tool call is in flight on that replica's MCP server, so no other replica can take
it over. What the others can do is tell a client that sent the answer to the wrong replica
where the question waits (409), instead of saying it does not exist. Operators keep a
client's Responses requests on one replica (sticky sessions; docs/serve.md).
"""

from __future__ import annotations

import os
import socket
import time

from farmhand.service.database import is_postgresql, open_shared_database
from farmhand.service.database_types import Database


def replica_name() -> str:
    """How operators know this process: its host (a pod's name on Kubernetes) and pid."""
    return f"{socket.gethostname()}:{os.getpid()}"


class QuestionHolders:
    """The `parked_questions` table, opened on first use (a server whose database is down
    still starts, and says so on /ready)."""

    def __init__(self, url: str) -> None:
        self._url = url
        self._opened: Database | None = None
        self._name = replica_name()

    @property
    def _db(self) -> Database:
        if self._opened is None:
            self._opened = open_shared_database(self._url)
        return self._opened

    @classmethod
    def shared(cls, store: str | None) -> QuestionHolders | None:
        """The holders of `store` when replicas share it; None for a process's own SQLite
        (its questions can only be answered through it)."""
        if store is None or not is_postgresql(store):
            return None
        return cls(store)

    def park(self, question_id: str) -> None:
        self._db.execute(
            "INSERT INTO parked_questions (question_id, replica, replica_name, parked_at)"
            " VALUES (?, ?, ?, ?) ON CONFLICT(question_id) DO UPDATE SET"
            " replica=excluded.replica, replica_name=excluded.replica_name,"
            " parked_at=excluded.parked_at",
            (question_id, self._db.replica, self._name, time.time()),
        )

    def release(self, question_id: str) -> None:
        self._db.execute(
            "DELETE FROM parked_questions WHERE question_id=? AND replica=?",
            (question_id, self._db.replica),
        )

    def elsewhere(self, question_id: str) -> str | None:
        """The name of the other, running replica that holds `question_id`; None when no
        other does (a holder that died is forgotten: its question went with it)."""
        row = self._db.execute(
            "SELECT replica, replica_name FROM parked_questions WHERE question_id=?",
            (question_id,),
        ).one()
        if row is None or row[0] == self._db.replica:
            return None
        if not self._db.replica_alive(row[0]):
            self._db.execute(
                "DELETE FROM parked_questions WHERE question_id=? AND replica=?",
                (question_id, row[0]),
            )
            return None
        return str(row[1])

    def close(self) -> None:
        if self._opened is not None:
            self._opened.close()
            self._opened = None
