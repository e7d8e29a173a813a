"""How a step's batch is shared between sequences (`llamacpp.batch.batch_share`)."""

from __future__ import annotations

from farmhand.providers.llamacpp.batch import batch_share


def share(
    pending: int,
    *,
    reading: bool = True,
    room: int = 512,
    streaming: bool = False,
    first: bool = True,
    paused: float = 0.0,
) -> int:
    return batch_share(
        pending,
        reading_prompt=reading,
        room=room,
        prompt_chunk=128,
        streaming=streaming,
        first=first,
        paused=paused,
        read_pause=4.0,
    )


def test_a_generating_sequence_gives_its_one_token() -> None:
    assert share(1, reading=False, streaming=True) == 1


def test_a_prompt_alone_fills_the_batch() -> None:
    assert share(12_000) == 512
    assert share(300) == 300


def test_while_others_stream_a_short_prompt_joins_at_once() -> None:
    assert share(40, streaming=True) == 40
    assert share(128, streaming=True) == 128
    assert share(40, streaming=True, room=20) == 20


def test_while_others_stream_a_long_prompt_pauses_then_reads_a_chunk() -> None:
    # the streams get the steps to themselves for the pause, so a tool call beside a
    # 12k-token prompt is written at about its own pace...
    assert share(12_000, streaming=True, paused=0.0) == 0
    assert share(12_000, streaming=True, paused=3.9) == 0
    # ...and the long prompt still moves, a chunk at a time
    assert share(12_000, streaming=True, paused=4.0, room=510) == 128
    assert share(12_000, streaming=True, paused=9.0, room=20) == 20


def test_a_long_prompt_does_not_ride_along_with_a_shorter_one() -> None:
    # the short question took 20 of 512: the 12k prompt waits, so the question's step is
    # as short as it would be alone
    assert share(12_000, room=492, first=False) == 0


def test_a_prompt_that_finishes_in_the_room_left_rides_along() -> None:
    assert share(200, room=300, first=False) == 200
