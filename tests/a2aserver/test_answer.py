"""The answer artifact as the model writes it: pieces that come close together go out
together, a slow writer's go out one by one, and a new turn's text replaces the last's."""

from __future__ import annotations

from typing import Any

import pytest
from a2a.types.a2a_pb2 import Part

from farmhand.a2aserver.answer import INTERVAL, AnswerStream

pytestmark = pytest.mark.anyio


class Recorder:
    """Stands in for the SDK's TaskUpdater: keeps what would be sent."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, bool, bool]] = []

    async def add_artifact(
        self, parts: list[Part], artifact_id: str, name: str, **flags: Any
    ) -> None:
        text = "".join(p.text for p in parts)
        self.sent.append((text, bool(flags.get("append")), bool(flags.get("last_chunk"))))


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


async def test_pieces_close_together_go_out_together(clock: Clock) -> None:
    recorder = Recorder()
    stream = AnswerStream(recorder, clock=clock)  # type: ignore[arg-type]
    await stream.add("The ")  # the first goes at once
    for piece in ("barn ", "is ", "red"):
        clock.now += INTERVAL / 10
        await stream.add(piece)
    assert recorder.sent == [("The ", False, False)]
    clock.now += INTERVAL  # a piece after a pause takes the waiting ones along
    await stream.add(".")
    assert recorder.sent[-1] == ("barn is red.", True, False)


async def test_a_slow_writer_streams_piece_by_piece(clock: Clock) -> None:
    recorder = Recorder()
    stream = AnswerStream(recorder, clock=clock)  # type: ignore[arg-type]
    for piece in ("Hay ", "is ", "dry."):
        clock.now += INTERVAL * 2
        await stream.add(piece)
    assert [text for text, _, _ in recorder.sent] == ["Hay ", "is ", "dry."]
    assert [append for _, append, _ in recorder.sent] == [False, True, True]


async def test_a_new_turn_replaces_and_the_end_is_the_whole_answer(clock: Clock) -> None:
    recorder = Recorder()
    stream = AnswerStream(recorder, clock=clock)  # type: ignore[arg-type]
    await stream.add("Let me look.")
    clock.now += INTERVAL / 10
    await stream.add(" One moment.")
    await stream.new_turn()  # what waited goes first; the next text starts afresh
    clock.now += INTERVAL * 2
    await stream.add("It is red.")
    await stream.finish([Part(text="It is red.")])
    assert recorder.sent == [
        ("Let me look.", False, False),
        (" One moment.", True, False),
        ("It is red.", False, False),
        ("It is red.", False, True),
    ]


async def test_no_pieces_when_nobody_watches(clock: Clock) -> None:
    recorder = Recorder()
    stream = AnswerStream(recorder, live=False, clock=clock)  # type: ignore[arg-type]
    for piece in ("Hay ", "is ", "dry."):
        clock.now += INTERVAL * 2
        await stream.add(piece)
    await stream.new_turn()
    await stream.finish([Part(text="Hay is dry.")])
    assert recorder.sent == [("Hay is dry.", False, True)]
