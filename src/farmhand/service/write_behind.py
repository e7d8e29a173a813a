"""Statements a shared store sends without waiting for them (`Database.send`): one thread
per database runs them in the order they were sent, so the caller (the event loop, or a
synchronous error renderer) goes on at once, and what waits for the database is this
thread.

Those that queue up while a statement is on its way go together as one transaction (one
round trip for many: what 32 clients' task rows need); should it fail, each is run again
on its own, so a statement that cannot be written never takes the others with it. A
statement that fails on its own is logged: its caller has long gone on.

Nothing sent is lost on shutdown: `close` writes what is queued before it returns. A reader
calls `flush` first (it returns once everything sent before it is written), and a request
that must not answer before its rows are written awaits `written()`, which waits without
blocking the event loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections.abc import Callable, Sequence
from typing import Any

from farmhand.service.database_types import Write

log = logging.getLogger(__name__)

Statement = tuple[str, Sequence[Any]]
Waiter = tuple[int, asyncio.AbstractEventLoop, "asyncio.Future[None]"]


class WriteBehind:
    """A queue of statements and the thread that writes them with `write` (several as one
    transaction: `Database.write`)."""

    def __init__(self, write: Callable[[Sequence[Write]], object], name: str) -> None:
        self._write = write
        self._queue: list[Statement] = []
        self._sent = 0  # statements sent so far
        self._done = 0  # of those, written (or failed and logged)
        self._closing = False
        self._waiters: list[Waiter] = []
        self._changed = threading.Condition()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def send(self, sql: str, params: Sequence[Any]) -> None:
        """Queue `sql` to be written after everything sent before it."""
        with self._changed:
            if self._closing:
                raise RuntimeError("the store is closed")
            self._queue.append((sql, params))
            self._sent += 1
            self._changed.notify_all()

    def flush(self) -> None:
        """Return once everything sent so far is written."""
        with self._changed:
            target = self._sent
            self._changed.wait_for(lambda: self._done >= target)

    async def written(self) -> None:
        """`flush` for the event loop: awaits, without blocking it."""
        with self._changed:
            if self._done >= self._sent:
                return
            future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._waiters.append((self._sent, asyncio.get_running_loop(), future))
        await future

    def close(self) -> None:
        """Write what is queued, then stop the thread."""
        with self._changed:
            self._closing = True
            self._changed.notify_all()
        self._thread.join()

    def _run(self) -> None:
        while True:
            with self._changed:
                self._changed.wait_for(lambda: bool(self._queue) or self._closing)
                batch, self._queue = self._queue, []
                if not batch:  # closing, and nothing left
                    return
            try:
                self._write_batch(batch)
            finally:  # counted even if the thread dies, so no flush waits forever
                self._account(len(batch))

    def _account(self, count: int) -> None:
        """`count` more statements are done: wake who waited for them."""
        with self._changed:
            self._done += count
            self._changed.notify_all()
            ready = [w for w in self._waiters if w[0] <= self._done]
            self._waiters = [w for w in self._waiters if w[0] > self._done]
        for _, loop, future in ready:
            with contextlib.suppress(RuntimeError):  # a closed loop: nobody waits
                loop.call_soon_threadsafe(_settle, future)

    def _write_batch(self, batch: list[Statement]) -> None:
        try:
            self._write([Write(sql, [params]) for sql, params in batch])
            return
        except Exception:
            if len(batch) == 1:
                log.warning("a store write failed", exc_info=True)
                return
        for sql, params in batch:  # one of them failed the transaction: each on its own
            try:
                self._write([Write(sql, [params])])
            except Exception:
                log.warning("a store write failed", exc_info=True)


def _settle(future: asyncio.Future[None]) -> None:
    if not future.done():  # its waiter may have been cancelled
        future.set_result(None)
