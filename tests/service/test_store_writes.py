"""`Database.write`: several statements as one transaction nobody reads back, on SQLite
and on a real PostgreSQL, where psycopg's pipeline mode sends them in one round trip (a
stored response is one write: the hot path of `store: true`)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from psycopg import pq
from tests.support.postgres import fresh_database, postgres_server

from farmhand.service.database import open_database
from farmhand.service.database_types import Database, Write
from farmhand.service.postgres import shared_postgres
from farmhand.service.responses_store import ResponseStore
from farmhand.service.tasks import DATABASE_NAME

__all__ = ["postgres_server"]  # the session fixture, used by name below

ITEM = "INSERT INTO response_items (item_id, response_id, chars) VALUES (?, ?, ?)"
RESPONSE = (
    "INSERT INTO responses (id, model, created_at, input_items, response)"
    " VALUES (?, 'm', 0, '[]', ?)"
)


@pytest.fixture(params=["sqlite", "postgresql"])
def stores(
    request: pytest.FixtureRequest, tmp_path: Path
) -> Iterator[tuple[ResponseStore, Database]]:
    """A response store (its tables made) and its database, on SQLite or PostgreSQL."""
    store = None
    if request.param == "postgresql":
        store = fresh_database(request.getfixturevalue("postgres_server"))
    responses = ResponseStore.in_home(tmp_path, store)
    database = open_database(tmp_path / DATABASE_NAME, store)
    yield responses, database
    database.close()
    responses.close()


def _response(response_id: str) -> str:
    return f'{{"id": "{response_id}", "output": []}}'


def test_a_write_runs_its_statements_in_order_and_counts_their_rows(
    stores: tuple[ResponseStore, Database],
) -> None:
    responses, database = stores
    changed = database.write(
        [
            Write(RESPONSE, [("r1", _response("r1"))]),
            Write(ITEM, [("a", "r1", 1), ("b", "r1", 2), ("c", "r1", 3)]),
            Write("DELETE FROM response_items WHERE item_id=?", [("b",)]),
            Write("DELETE FROM response_items WHERE item_id=?", [("nothing",)]),
            Write(ITEM, []),  # no rows: not run
        ]
    )
    assert changed == [1, 3, 1, 0, 0]
    stored = responses.get("r1")
    assert stored is not None and stored.response == {"id": "r1", "output": []}
    assert responses.item_sizes(["a", "b", "c"]) == {"a": 1, "c": 3}


def test_a_write_whose_statement_fails_keeps_none_of_it(
    stores: tuple[ResponseStore, Database],
) -> None:
    responses, database = stores
    duplicate = [("a", "r1", 1), ("a", "r1", 1)]  # the same primary key twice
    with pytest.raises((psycopg.errors.UniqueViolation, sqlite3.IntegrityError)):
        database.write([Write(RESPONSE, [("r1", _response("r1"))]), Write(ITEM, duplicate)])
    assert responses.get("r1") is None and responses.item_sizes(["a"]) == {}
    # the connection went back to the pool usable: the next write is kept
    assert database.write([Write(RESPONSE, [("r2", _response("r2"))])]) == [1]
    assert responses.get("r2") is not None


def test_storing_a_response_again_replaces_its_items(
    stores: tuple[ResponseStore, Database],
) -> None:
    responses, _ = stores
    said = {"id": "in_1", "role": "user", "content": "hello"}
    first = {"id": "resp_1", "output": [{"id": "msg_1", "type": "message", "content": "hi"}]}
    responses.put(first, [said], "m")
    again = {"id": "resp_1", "output": [{"id": "msg_2", "type": "message", "content": "yo"}]}
    responses.put(again, [said], "m2")
    stored = responses.get("resp_1")
    assert stored is not None and stored.model == "m2"
    assert [i["id"] for i in stored.conversation] == ["in_1", "msg_2"]
    assert set(responses.item_sizes(["in_1", "msg_1", "msg_2"])) == {"in_1", "msg_2"}
    assert responses.delete("resp_1") is True
    assert responses.item_sizes(["in_1", "msg_2"]) == {}


def test_storing_a_response_on_postgresql_is_one_round_trip(
    postgres_server: str, tmp_path: Path
) -> None:
    """What libpq sends while a response with its items is stored: one statement (the
    response, the old index rows deleted and every item's inserted), then one Sync (the
    one answer waited for), where a transaction of its own waited for each statement,
    BEGIN and COMMIT included."""
    url = fresh_database(postgres_server)
    responses = ResponseStore.in_home(tmp_path, url)
    database = shared_postgres(url)  # the pool the store uses: one connection, idle
    assert database.pool.get_stats()["pool_size"] == 1
    trace = tmp_path / "libpq.trace"
    items = [{"id": f"in_{n}", "role": "user", "content": f"turn {n}"} for n in range(5)]
    with trace.open("w") as sink:
        with database.pool.connection() as conn:
            conn.pgconn.trace(sink.fileno())
            conn.pgconn.set_trace_flags(pq.Trace.SUPPRESS_TIMESTAMPS | pq.Trace.REGRESS_MODE)
        responses.put({"id": "resp_1", "output": []}, items, "m")
        with database.pool.connection() as conn:
            conn.pgconn.untrace()
    sent = [line.split("\t") for line in trace.read_text().splitlines()]
    frontend = [fields[2] for fields in sent if fields[0] == "F"]
    assert frontend.count("Sync") == 1, frontend
    assert frontend.count("Execute") == 1  # response, delete and items: one statement
    assert "Query" not in frontend  # no BEGIN/COMMIT of its own
    stored = responses.get("resp_1")
    assert stored is not None and [i["id"] for i in stored.input_items] == [i["id"] for i in items]
    database.close()
    responses.close()
