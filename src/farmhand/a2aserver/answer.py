"""The answer artifact of a task, as the model writes it.

Each update of a task costs the SDK's machinery about half a millisecond of CPU (its
queues, the task's copy for every subscriber, the store), so pieces of text that come
faster than `INTERVAL` apart go out together: a backend that writes a hundred tokens in a
blink makes a few updates, not a hundred, while a model writing at a person's reading
pace (the embedded one: tens of milliseconds a token) still streams token by token. A
turn's first piece replaces the text of the turn before it: the answer is the last turn's.

A message sent with `SendMessage` (and not `returnImmediately`) waits for the whole task:
nobody reads the pieces, so none are sent (`live` False), only the whole answer.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from a2a.server.tasks import TaskUpdater
from a2a.types.a2a_pb2 import Part

ANSWER = "answer"
"""The id (and name) of the artifact that holds a task's answer."""
INTERVAL = 0.05
"""Seconds: text that comes sooner after the last update waits for the next piece."""


class AnswerStream:
    def __init__(
        self,
        updater: TaskUpdater,
        *,
        live: bool = True,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.updater = updater
        self.live = live
        self.clock = clock
        self._held: list[str] = []
        self._sent_at = 0.0
        self._started = False  # this turn has sent text already

    async def add(self, text: str) -> None:
        if not self.live:
            return
        self._held.append(text)
        if self.clock() - self._sent_at >= INTERVAL:
            await self.flush()

    async def flush(self) -> None:
        """Send what waits (before anything else the task says)."""
        if not self._held:
            return
        text, self._held = "".join(self._held), []
        await self.updater.add_artifact([Part(text=text)], ANSWER, ANSWER, append=self._started)
        self._started = True
        self._sent_at = self.clock()

    async def new_turn(self) -> None:
        await self.flush()
        self._started = False

    async def finish(self, parts: list[Part]) -> None:
        """The whole answer, replacing what was streamed, as the last chunk."""
        self._held = []
        await self.updater.add_artifact(parts, ANSWER, ANSWER, append=False, last_chunk=True)
