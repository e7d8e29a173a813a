"""The engine that owns a model's context: every command on one thread, never two turns at
once (whatever the callers do: leave mid-command, be cancelled while queued), a queue bound,
a reader that stops reading dropped, and the model freed only once nobody uses it."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from typing import Any

import anyio
import pytest

from farmhand.errors import BusyError, ProviderError
from farmhand.providers.llamacpp.engine import Engine, EngineLimits

pytestmark = pytest.mark.anyio


class Context:
    """Stands in for a llama context: records who used it, and fails if two did at once."""

    def __init__(self) -> None:
        self.in_use = False
        self.threads: set[int] = set()
        self.log: list[str] = []
        self.overlaps = 0

    def step(self, name: str, seconds: float = 0.01) -> str:
        if self.in_use:
            self.overlaps += 1
        self.in_use = True
        self.threads.add(threading.get_ident())
        time.sleep(seconds)
        self.log.append(name)
        self.in_use = False
        return name


async def test_turns_run_one_at_a_time_on_one_thread() -> None:
    context = Context()
    engine = Engine("m", limits=EngineLimits(max_queue=10))

    async def client(index: int) -> list[str]:
        async with engine.turn() as turn:
            return [await turn.call(context.step, f"{index}.{i}") for i in range(5)]

    results: dict[int, list[str]] = {}

    async def run(index: int) -> None:
        results[index] = await client(index)

    async with anyio.create_task_group() as group:
        for index in range(4):
            group.start_soon(run, index)
    assert context.overlaps == 0
    assert len(context.threads) == 1 and threading.get_ident() not in context.threads
    for index in range(4):  # each turn's steps in order, and no other turn's in between
        start = context.log.index(f"{index}.0")
        assert context.log[start : start + 5] == [f"{index}.{i}" for i in range(5)]
    engine.close()
    assert engine.join(5)


async def test_a_caller_that_leaves_mid_step_frees_the_context_before_the_next_turn() -> None:
    context = Context()
    engine = Engine("m")

    async def leaver() -> None:
        async with engine.turn() as turn:
            turn.on_release(lambda: context.step("cleanup", 0))
            await turn.call(context.step, "slow", 0.3)  # cancelled while this runs

    async with anyio.create_task_group() as group:
        group.start_soon(leaver)
        await anyio.sleep(0.1)
        group.cancel_scope.cancel()
    async with engine.turn() as turn:
        await turn.call(context.step, "next")
    # The slow step finished, then the leaver's cleanup, and only then the next turn.
    assert context.log == ["slow", "cleanup", "next"]
    assert context.overlaps == 0
    engine.close()
    assert engine.join(5)


class Holder:
    """A request that holds the engine until released."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.holding = anyio.Event()
        self.release = anyio.Event()

    async def hold(self) -> None:
        async with self.engine.turn():
            self.holding.set()
            await self.release.wait()


async def test_a_full_queue_is_refused_with_a_retry_after() -> None:
    engine = Engine("m", limits=EngineLimits(max_queue=1))
    holder = Holder(engine)

    async def wait_in_line() -> None:
        async with engine.turn():
            pass

    async with anyio.create_task_group() as group:
        group.start_soon(holder.hold)
        await holder.holding.wait()
        group.start_soon(wait_in_line)
        await anyio.sleep(0.05)
        assert engine.status().queued == 1
        with pytest.raises(BusyError) as refused:
            async with engine.turn():
                pass
        assert refused.value.status == 429 and refused.value.retry_after >= 1
        assert "max_queue" in str(refused.value)
        holder.release.set()
    with anyio.fail_after(5):  # the engine's thread frees the released turns' slots
        while engine.status().active or engine.status().queued:
            await anyio.sleep(0.01)
    engine.close()


async def test_a_turn_cancelled_while_queued_leaves_the_queue() -> None:
    engine = Engine("m", limits=EngineLimits(max_queue=4))
    holder = Holder(engine)

    async def queued() -> None:
        async with engine.turn():
            raise AssertionError("a cancelled turn never holds the engine")

    async with anyio.create_task_group() as group:
        group.start_soon(holder.hold)
        await holder.holding.wait()
        async with anyio.create_task_group() as waiting:
            waiting.start_soon(queued)
            await anyio.sleep(0.05)
            assert engine.status().queued == 1
            waiting.cancel_scope.cancel()
        assert engine.status().queued == 0
        holder.release.set()
    engine.close()


async def test_a_reader_that_stops_asking_is_dropped() -> None:
    context = Context()
    engine = Engine("m", limits=EngineLimits(stall_timeout=0.2))
    async with engine.turn() as turn:
        turn.on_release(lambda: context.step("freed", 0))
        await turn.call(context.step, "first")
        await anyio.sleep(0.6)  # a client that stopped reading its stream
        with pytest.raises(ProviderError, match="stall_timeout"):
            await turn.call(context.step, "never")
    assert context.log == ["first", "freed"]
    async with engine.turn() as other:  # the model is free for the next request
        assert await other.call(context.step, "next") == "next"
    engine.close()


async def test_errors_reach_the_caller_and_the_engine_goes_on() -> None:
    engine = Engine("m")

    def fail() -> None:
        raise ValueError("llama said no")

    async with engine.turn() as turn:
        with pytest.raises(ValueError, match="llama said no"):
            await turn.call(fail)
        assert await turn.call(lambda: 42) == 42
    engine.close()


async def test_the_model_is_freed_only_when_the_last_turn_is_done() -> None:
    freed = threading.Event()
    engine = Engine("m", on_close=freed.set)
    async with engine.turn() as turn:
        await turn.call(lambda: None)
        engine.close()  # unloaded while a request still generates
        await turn.call(lambda: None)  # it goes on
        assert not freed.is_set()
        with pytest.raises(ProviderError, match="unloaded"):
            async with engine.turn():
                pass
    assert engine.join(5) and freed.is_set()


async def test_an_engine_never_used_frees_its_model_at_once() -> None:
    freed = threading.Event()
    Engine("m", on_close=freed.set).close()
    assert freed.is_set()


async def test_slots_step_together_in_one_batch() -> None:
    """With a stepper, the turns holding the engine's slots are decoded together: one call
    per step over every turn that asked, each getting its own next token."""
    batches: list[list[str]] = []
    threads: set[int] = set()

    def stepper(generations: list[Any]) -> list[tuple[Any, Any]]:
        threads.add(threading.get_ident())
        batches.append(sorted(g.name for g in generations))
        produced = []
        for generation in generations:
            generation.count += 1
            produced.append((generation, f"{generation.name}{generation.count}"))
        return produced

    class Generation:
        def __init__(self, name: str) -> None:
            self.name, self.count = name, 0

    engine = Engine("m", slots=3, stepper=stepper, limits=EngineLimits(max_queue=0))
    tokens: dict[str, list[str]] = {}

    async def chat(name: str) -> None:
        async with engine.turn() as turn:
            generation = Generation(name)
            tokens[name] = [await turn.step(generation) for _ in range(5)]

    async with anyio.create_task_group() as group:
        for name in "abc":
            group.start_soon(chat, name)
    assert tokens == {n: [f"{n}{i}" for i in range(1, 6)] for n in "abc"}
    assert ["a", "b", "c"] in batches  # at least one step decoded all three together
    assert len(batches) < 15  # fewer decodes than tokens
    assert len(threads) == 1
    assert engine.status().slots == 3
    engine.close()


async def test_a_long_step_learns_that_a_request_waits_for_a_free_slot() -> None:
    """`admission_waiting` is what llama.cpp's abort callback asks during a step that reads
    a long prompt: true once a request waits and a slot is free, so the step gives way and
    the newcomer joins the next one."""
    polls: list[bool] = []
    batches: list[list[str]] = []

    def stepper(generations: list[Any]) -> list[tuple[Any, Any]]:
        names = sorted(g for g in generations)
        batches.append(names)
        if names == ["long"]:
            for _ in range(1000):  # a step of up to 10 s, polled as llama.cpp polls
                polls.append(engine.admission_waiting())
                if polls[-1]:
                    return []  # gave way: nothing sampled, asked again
                time.sleep(0.01)
        return [(g, f"{g}-token") for g in generations]

    engine = Engine("m", slots=2, stepper=stepper)
    got: dict[str, str] = {}
    long_step_started = anyio.Event()

    async def chat(name: str) -> None:
        async with engine.turn() as turn:
            if name == "long":
                long_step_started.set()
            got[name] = await turn.step(name)

    async with anyio.create_task_group() as group:
        group.start_soon(chat, "long")
        await long_step_started.wait()
        while not polls:  # the long step is in flight
            await anyio.sleep(0.01)
        group.start_soon(chat, "short")
    assert got == {"long": "long-token", "short": "short-token"}
    assert polls[0] is False and polls[-1] is True  # nobody waited, then the short chat
    assert batches[-1] == ["long", "short"]  # the newcomer joined the step read again
    assert not engine.admission_waiting()
    engine.close()


def test_an_exiting_process_frees_its_models_first(tmp_path: Any) -> None:
    """Replays the exit-time abort: a turn still holds the engine and freeing the model takes
    a while on the engine's daemon thread when the main thread returns. The process must
    free it (and run the turn's cleanups) before it exits, not die with the thread mid-C."""
    marks = tmp_path / "marks.txt"
    script = f"""
import asyncio, time
from farmhand.providers.llamacpp.engine import Engine

def mark(text):
    with open({str(marks)!r}, "a") as f:
        f.write(text + "\\n")

def free():
    time.sleep(0.5)  # in C, the GIL released, as llama.cpp's free is
    mark("freed")

engine = Engine("m", on_close=free)

async def main():
    turn_cm = engine.turn()
    turn = await turn_cm.__aenter__()  # held, never released: the loop ends first
    turn.on_release(lambda: mark("cleaned"))
    await turn.call(time.sleep, 0.01)

asyncio.run(main())
"""
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert marks.read_text().split() == ["cleaned", "freed"]


def test_shutdown_releases_waiting_turns_and_reports_the_model_freed() -> None:
    freed = threading.Event()
    engine = Engine("m", on_close=freed.set)

    async def hold_and_leave() -> None:
        holder = engine.turn()
        await holder.__aenter__()  # never exited, as in a process that stops mid-answer

    anyio.run(hold_and_leave)
    assert not freed.is_set()
    assert engine.shutdown(timeout=5)
    assert freed.is_set()
