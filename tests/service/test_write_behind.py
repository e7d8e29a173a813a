"""`Database.send` on a shared store: statements written behind their caller, in order, by
one thread (`service/write_behind.py`); nothing sent is lost on close, a reader sees what
was sent, and a statement that fails does not take the others queued with it."""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from pathlib import Path

import anyio
import psycopg
import pytest
from tests.support.postgres import fresh_database, postgres_server

from farmhand.service.database_types import Write
from farmhand.service.tasks import TaskStore
from farmhand.service.write_behind import WriteBehind

__all__ = ["postgres_server"]  # the session fixture, used by name below


class Recorder:
    """A `write` that records each call's statements; held at `gate` until it is set, and
    failing a call that holds a statement named in `refused`."""

    def __init__(self, refused: tuple[str, ...] = ()) -> None:
        self.calls: list[list[str]] = []
        self.gate = threading.Event()
        self.gate.set()
        self.refused = refused

    def __call__(self, writes: Sequence[Write]) -> None:
        self.gate.wait()
        sqls = [write.sql for write in writes]
        if any(sql in self.refused for sql in sqls):
            raise RuntimeError("refused")
        self.calls.append(sqls)


def test_statements_are_written_in_order_and_flush_waits_for_them() -> None:
    recorder = Recorder()
    recorder.gate.clear()  # the first is held: the rest queue behind it
    behind = WriteBehind(recorder, "test-writes")
    for n in range(4):
        behind.send(f"s{n}", ())
    recorder.gate.set()
    behind.flush()
    written = [sql for call in recorder.calls for sql in call]
    assert written == ["s0", "s1", "s2", "s3"]
    assert len(recorder.calls) < 4  # those that queued went together
    behind.close()


def test_a_failing_statement_does_not_take_the_others_queued_with_it(
    caplog: pytest.LogCaptureFixture,
) -> None:
    recorder = Recorder(refused=("bad",))
    recorder.gate.clear()
    behind = WriteBehind(recorder, "test-writes")
    behind.send("first", ())
    for sql in ("good", "bad", "also good"):  # one batch behind the held first
        behind.send(sql, ())
    with caplog.at_level(logging.WARNING, logger="farmhand.service.write_behind"):
        recorder.gate.set()
        behind.flush()
    written = [sql for call in recorder.calls for sql in call]
    assert written == ["first", "good", "also good"]
    assert [r.getMessage() for r in caplog.records] == ["a store write failed"]
    behind.close()


def test_close_writes_what_is_queued_and_refuses_more() -> None:
    recorder = Recorder()
    recorder.gate.clear()
    behind = WriteBehind(recorder, "test-writes")
    behind.send("a", ())
    behind.send("b", ())
    threading.Timer(0.05, recorder.gate.set).start()
    behind.close()
    assert [sql for call in recorder.calls for sql in call] == ["a", "b"]
    with pytest.raises(RuntimeError, match="closed"):
        behind.send("late", ())


@pytest.mark.anyio
async def test_written_waits_without_blocking_the_event_loop() -> None:
    recorder = Recorder()
    recorder.gate.clear()
    behind = WriteBehind(recorder, "test-writes")
    behind.send("row", ())
    said: list[str] = []

    async def release() -> None:  # runs while `written` waits: the loop is free
        said.append("loop ran")
        recorder.gate.set()

    async with anyio.create_task_group() as group:
        group.start_soon(release)
        await behind.written()
        said.append("written")
    assert said == ["loop ran", "written"] and recorder.calls == [["row"]]
    await behind.written()  # nothing pending: returns at once
    behind.close()


def test_a_new_task_on_postgresql_is_written_behind_and_never_lost(
    postgres_server: str, tmp_path: Path
) -> None:
    """`start` and `finish` of a task whose id the store made return at once on a shared
    store; `flush` (and `close`) returns once they are in the database, as another
    connection (another replica) sees it."""
    url = fresh_database(postgres_server)
    tasks = TaskStore.in_home(tmp_path, url)
    started = tasks.start(None, "m", "ollama")
    assert started.status == "working"
    tasks.flush()
    with psycopg.connect(url) as conn:
        row = conn.execute("SELECT status, model FROM tasks WHERE id=%s", (started.id,)).fetchone()
    assert row == ("working", "m")
    finished = tasks.finish(started.id, "boom")
    assert finished is not None and (finished.status, finished.error) == ("failed", "boom")
    assert finished.created_at == started.created_at
    late = tasks.start(None, "m", "ollama")
    tasks.finish(late.id)
    tasks.close()  # not flushed: close writes what was sent
    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "SELECT id, status, error FROM tasks WHERE id IN (%s, %s) ORDER BY status",
            (started.id, late.id),
        ).fetchall()
    assert rows == [(late.id, "completed", None), (started.id, "failed", "boom")]
