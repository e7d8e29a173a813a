"""One engine per loaded model: the only code that touches its llama context.

llama.cpp's context is not thread-safe, and a request that leaves mid-token must not let the
next one in while a decode is still running (that crashed the server: two callers in one
context, GGML_ASSERT, SIGABRT). So each loaded model gets one dedicated thread, and every
piece of work on its context (restoring a prompt head, evaluating a prompt, sampling a token,
closing a sampler) is a command that thread runs, one after another:

- A request opens a `Turn` (`Engine.turn()`): it waits in the model's queue (bounded by
  `EngineLimits.max_queue`; past it `BusyError`, a 429 with Retry-After) until it holds the
  context, then sends commands (`Turn.call`), one at a time, and awaits their results on the
  event loop. The event loop itself never touches the context.
- A turn that ends for any reason (done, stopped, cancelled because its client left, a
  deadline) is released without waiting: its cleanups (closing the sampler) are queued on
  the engine's thread, which runs them after the command in flight, if any, and before the
  next turn's first one. A turn whose reader stops asking for tokens for
  `EngineLimits.stall_timeout` seconds is dropped the same way.

A request that leaves therefore stops costing anything at the next token, and nothing that
arrives over the API can make two callers use one context: there is only one thread to use
it, by construction.
"""

from __future__ import annotations

import asyncio
import atexit
import logging
import threading
import time
import weakref
from collections import deque
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass
from typing import Any, TypeVar

from farmhand.errors import BusyError, ProviderError

log = logging.getLogger(__name__)

T = TypeVar("T")

DEFAULT_MAX_QUEUE = 8
# Sequences a served embedded model steps together when its entry sets no n_parallel: a
# server shares the model between clients (llama-server's `-np` auto also gives 4 slots);
# one user at a terminal gets one (`llamacpp.DEFAULT_N_PARALLEL`). See bench/README.md.
SERVED_N_PARALLEL = 4
DEFAULT_STALL_TIMEOUT = 60.0
# A turn's length before any was measured, for the first Retry-After.
_FIRST_TURN_GUESS = 5.0
# How long an exiting process waits for each engine to free its model.
EXIT_WAIT_SECONDS = 30.0


@dataclass(frozen=True)
class EngineLimits:
    """`max_queue`: requests that may wait for a model besides the one it is answering
    (more get a 429); `stall_timeout`: seconds a request may hold the model without asking
    for its next token before it is dropped (a client that stopped reading its stream)."""

    max_queue: int = DEFAULT_MAX_QUEUE
    stall_timeout: float = DEFAULT_STALL_TIMEOUT


@dataclass(frozen=True)
class EngineStatus:
    """What an engine is doing, for `/api/ps`."""

    slots: int
    active: int
    queued: int
    max_queue: int
    prompt_tokens_processed: int = 0  # evaluated by llama.cpp so far (shared heads are not)


class Turn:
    """One request's hold on an engine: commands run on the engine's thread, in order."""

    def __init__(self, engine: Engine, loop: asyncio.AbstractEventLoop) -> None:
        self._engine = engine
        self._loop = loop
        self.admitted: asyncio.Future[None] = loop.create_future()
        self.commands: deque[tuple[Callable[[], Any], asyncio.Future[Any] | None]] = deque()
        self.demand: tuple[Any, asyncio.Future[Any]] | None = None
        self.cleanups: list[Callable[[], None]] = []
        self.released = False
        self.dropped: str | None = None  # why the engine dropped this turn, if it did
        self.waiting_since = time.monotonic()  # since the last command was answered
        self.admitted_at: float | None = None  # when it got the context
        self.stepped = False  # whether it asked for a step yet

    async def call(self, function: Callable[..., T], *args: Any) -> T:
        """`function(*args)` run on the engine's thread; its result or its exception."""
        future: asyncio.Future[T] = self._loop.create_future()
        with self._engine.wake:
            if self.dropped is not None:
                raise ProviderError(self.dropped)
            self.commands.append((lambda: function(*args), future))
            self._engine.wake.notify()
        return await future

    def post(self, function: Callable[[], None]) -> None:
        """Run `function` on the engine's thread before this turn's next command, without
        waiting for it (e.g. free a sampler from a `finally` that cannot await)."""
        with self._engine.wake:
            if not self.released and self.dropped is None:
                self.commands.append((function, None))
                self._engine.wake.notify()

    async def step(self, generation: Any) -> Any:
        """The next token of `generation`, decoded in one batch with every other turn's
        that asks at the same time (`Engine.stepper`)."""
        future: asyncio.Future[Any] = self._loop.create_future()
        with self._engine.wake:
            if self.dropped is not None:
                raise ProviderError(self.dropped)
            self.demand = (generation, future)
            self.stepped = True
            self._engine.wake.notify()
        return await future

    def on_release(self, cleanup: Callable[[], None]) -> None:
        """Run `cleanup` on the engine's thread when this turn ends (e.g. free a sampler)."""
        with self._engine.wake:
            self.cleanups.append(cleanup)

    def settle(self, future: asyncio.Future[Any], result: Any, error: BaseException | None) -> None:
        """Hand a command's outcome to the event loop (from the engine's thread)."""

        def settle_now() -> None:
            if future.done():
                return  # its caller was cancelled and left
            if error is not None:
                future.set_exception(error)
            else:
                future.set_result(result)

        # A closed event loop (RuntimeError) has nobody waiting for this any more.
        with suppress(RuntimeError):
            self._loop.call_soon_threadsafe(settle_now)


Stepper = Callable[[list[Any]], list[tuple[Any, Any]]]
"""Decodes one batch over the generations given; returns (generation, token) for those
that have a token (a generation still reading its prompt may not)."""

# How long the thread waits for the other active turns' next request before it steps
# without them (their readers are handling the last token on the event loop).
GATHER_SECONDS = 0.003
# How long the thread waits for a turn it just admitted to ask for its first step before
# it steps without it: a step reading a long prompt can take seconds, and a newcomer that
# misses it waits all of them (its prompt is rendered and opened on the event loop first).
ADMIT_GRACE_SECONDS = 0.25


class Engine:
    """Owns one model's context on one thread; see the module's docstring. `slots`: turns
    that may hold the context at once (their token requests are decoded together by
    `stepper`, continuous batching); 1 without a stepper.

    `close()` stops the thread once no turn holds or awaits it, then runs `on_close` there
    (freeing the model), so the memory goes only when nobody can use it any more."""

    def __init__(
        self,
        name: str,
        *,
        limits: EngineLimits | None = None,
        on_close: Callable[[], None] | None = None,
        slots: int = 1,
        stepper: Stepper | None = None,
    ) -> None:
        self.name = name
        self.limits = limits or EngineLimits()
        self.slots = slots if stepper is not None else 1
        self.stepper = stepper
        self.wake = threading.Condition()
        self._waiting: deque[Turn] = deque()
        self._active: list[Turn] = []
        self._closing = False
        self._closed = threading.Event()
        self._on_close = on_close
        self._turn_seconds = _FIRST_TURN_GUESS  # moving average, for Retry-After
        self._started: dict[int, float] = {}
        self._gathered = False
        self._thread: threading.Thread | None = None
        self.last_active = time.monotonic()
        self.on_wait: Callable[[float], None] | None = None
        """Told how long each turn waited to be admitted (the server's metrics)."""
        _live_engines.add(self)

    def status(self) -> EngineStatus:
        with self.wake:
            return EngineStatus(
                slots=self.slots,
                active=len(self._active),
                queued=len(self._waiting),
                max_queue=self.limits.max_queue,
            )

    def admission_waiting(self) -> bool:
        """Whether a request waits for a slot that is free: the step in flight may give way.
        Called from llama.cpp's compute thread without the lock (a stale answer costs one
        step either way)."""
        return bool(self._waiting) and len(self._active) < self.slots

    @property
    def busy(self) -> bool:
        """Whether a turn holds or awaits the engine (a busy model is never evicted)."""
        with self.wake:
            return bool(self._active or self._waiting)

    @asynccontextmanager
    async def turn(self) -> AsyncIterator[Turn]:
        """Wait for the context (BusyError when the queue is full) and hold it until the
        block ends, however it ends."""
        turn = Turn(self, asyncio.get_running_loop())
        with self.wake:
            if self._closing:
                raise ProviderError(f"model {self.name!r} was unloaded; send the request again")
            full = len(self._active) >= self.slots
            if full and len(self._waiting) >= self.limits.max_queue:
                raise self._busy()
            self._waiting.append(turn)
            self._start()
            self.wake.notify()
        try:
            queued = time.perf_counter()
            await turn.admitted
            if self.on_wait is not None:
                self.on_wait(time.perf_counter() - queued)
            yield turn
        finally:
            self._release(turn)

    def close(self) -> None:
        """Free the model once the turns holding or awaiting it are done (at once if none)."""
        with self.wake:
            self._closing = True
            started = self._thread is not None
            self.wake.notify()
        if not started:
            self._finish()

    def join(self, timeout: float | None = None) -> bool:
        """Wait until the engine is closed and its model freed (tests, shutdown)."""
        return self._closed.wait(timeout)

    def shutdown(self, timeout: float = EXIT_WAIT_SECONDS) -> bool:
        """Release every turn, close, and wait for the model to be freed: for a process
        that is exiting, whose event loop will never await a turn again."""
        with self.wake:
            for turn in [*self._active, *self._waiting]:
                turn.released = True
            self._waiting.clear()
        self.close()
        return self.join(timeout)

    def _busy(self) -> BusyError:
        waiting = len(self._waiting) + 1
        retry = max(1, round(self._turn_seconds * waiting / self.slots))
        return BusyError(
            f"model {self.name!r} is busy: {waiting - 1} requests are waiting for it"
            f" (server.engine.max_queue is {self.limits.max_queue}); retry in about"
            f" {retry} s",
            retry_after=retry,
        )

    def _release(self, turn: Turn) -> None:
        with self.wake:
            if turn in self._waiting:
                self._waiting.remove(turn)
            turn.released = True
            self.wake.notify()

    def _start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._run, name=f"farmhand-engine-{self.name}", daemon=True
            )
            self._thread.start()

    def _run(self) -> None:
        while True:
            with self.wake:
                work = self._next_work()
                if work is None:
                    break
            kind, turn, payload = work
            if turn is None:  # a step: every turn that asked for a token
                self._step(payload)
            elif kind == "command":
                function, future = payload
                try:
                    result, error = function(), None
                except Exception as exc:  # handed to the caller
                    result, error = None, exc
                if future is not None:
                    turn.settle(future, result, error)
                elif error is not None:
                    log.error("engine %s: %s", self.name, error)
                with self.wake:
                    turn.waiting_since = time.monotonic()
            elif kind == "admit":
                self._started[id(turn)] = time.monotonic()
                turn.settle(turn.admitted, None, None)
            else:  # the turn ended: free what it held, here, before the next turn
                self._clean_up(turn, payload)
        self._finish()

    def _step(self, turns: list[Turn]) -> None:
        assert self.stepper is not None
        demands = {id(t.demand[0]): t for t in turns if t.demand is not None}
        try:
            produced = self.stepper([t.demand[0] for t in turns if t.demand is not None])
        except Exception as exc:
            with self.wake:
                for turn in turns:
                    if turn.demand is not None:
                        turn.settle(turn.demand[1], None, exc)
                        turn.demand = None
            return
        now = time.monotonic()
        with self.wake:
            if not produced:  # prompts read, or a head awaited from another turn
                self.wake.wait(GATHER_SECONDS)
            for generation, token in produced:
                turn = demands[id(generation)]
                if turn.demand is not None:
                    turn.settle(turn.demand[1], token, None)
                    turn.demand = None
                    turn.waiting_since = now

    def _clean_up(self, turn: Turn, cleanups: list[Callable[[], None]]) -> None:
        for cleanup in reversed(cleanups):
            try:
                cleanup()
            except Exception:
                log.exception("engine %s: cleaning up a turn failed", self.name)
        if turn.demand is not None:  # released while its token was being decoded
            turn.settle(turn.demand[1], None, ProviderError("the request has ended"))
        elapsed = time.monotonic() - self._started.pop(id(turn), time.monotonic())
        self._turn_seconds = 0.8 * self._turn_seconds + 0.2 * elapsed
        self.last_active = time.monotonic()

    def _next_work(self) -> tuple[str, Turn | None, Any] | None:
        """What the thread does next (called holding `wake`); None: stop, the engine is
        closed and idle."""
        while True:
            now = time.monotonic()
            self._drop_stalled(now)
            for turn in self._active:
                if turn.released or turn.dropped is not None:
                    self._active.remove(turn)
                    cleanups, turn.cleanups = turn.cleanups, []
                    return ("release", turn, cleanups)
            if self._waiting and len(self._active) < self.slots:
                turn = self._waiting.popleft()
                turn.waiting_since = turn.admitted_at = now
                self._active.append(turn)
                return ("admit", turn, None)
            for turn in self._active:
                if turn.commands:
                    return ("command", turn, turn.commands.popleft())
            demanding = [t for t in self._active if t.demand is not None]
            newcomers = [
                t.admitted_at + ADMIT_GRACE_SECONDS - now
                for t in self._active
                if not t.stepped and t.admitted_at is not None
            ]
            if demanding and self.stepper is not None and max(newcomers, default=0) > 0:
                self.wake.wait(max(newcomers))  # let a newcomer join the next step
                continue
            if demanding:
                if len(demanding) < len(self._active) and not self._gathered:
                    self._gathered = True  # let the other readers ask too, once
                    self.wake.wait(GATHER_SECONDS)
                    continue
                self._gathered = False
                return ("step", None, demanding)
            if not self._active and self._closing:
                return None
            idle_since = [t.waiting_since for t in self._active]
            deadline = min(idle_since) + self.limits.stall_timeout if idle_since else None
            self.wake.wait(None if deadline is None else max(0.001, deadline - now))

    def _drop_stalled(self, now: float) -> None:
        """Mark the turns whose reader asked for nothing for `stall_timeout` as dropped."""
        for turn in self._active:
            asking = turn.demand is not None or turn.commands
            if not asking and now - turn.waiting_since >= self.limits.stall_timeout:
                turn.dropped = (
                    f"model {self.name!r} dropped this request: it asked for no token"
                    f" for {self.limits.stall_timeout:g} s (server.engine.stall_timeout)"
                )

    def _finish(self) -> None:
        try:
            if self._on_close is not None:
                self._on_close()
        finally:
            self._closed.set()


_live_engines: weakref.WeakSet[Engine] = weakref.WeakSet()


@atexit.register
def _free_models_at_exit() -> None:
    """Free every model on its own thread before the interpreter exits. The thread is a
    daemon; left running, it could be inside llama.cpp (freeing a sampler or the model)
    when finalization stops it, and a thread stopped in C++ code aborts the process
    ("terminate called without an active exception", exit -6) after the answer was out."""
    for engine in list(_live_engines):
        if not engine.shutdown():
            log.warning(
                "engine %s: the model was not freed within %g s", engine.name, EXIT_WAIT_SECONDS
            )
