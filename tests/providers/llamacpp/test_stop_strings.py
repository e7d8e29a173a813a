"""Stop strings found in text that arrives a piece at a time: a stop split over several
pieces is still found, the text before it is all that is let through, and `matched` names
the stop that ended the text."""

from __future__ import annotations

from farmhand.providers.llamacpp.stop_strings import StopStrings


def run(stops: list[str], pieces: list[str]) -> tuple[str, str | None, int]:
    """The text let through, the stop matched, and how many pieces were read."""
    watch = StopStrings(stops)
    out = []
    read = 0
    for piece in pieces:
        read += 1
        out.append(watch.feed(piece))
        if watch.matched is not None:
            break
    else:
        out.append(watch.flush())
    return "".join(out), watch.matched, read


def test_a_stop_written_a_character_at_a_time_is_found() -> None:
    text = "Hello.\n\nHuman: more"
    assert run(["\n\nHuman:"], list(text)) == ("Hello.", "\n\nHuman:", len("Hello.\n\nHuman:"))


def test_a_stop_inside_one_piece_cuts_the_piece() -> None:
    assert run(["END", "+"], ["a + b", "END"]) == ("a ", "+", 1)


def test_the_earliest_stop_wins_and_of_two_at_one_place_the_shorter() -> None:
    assert run(["world", "lo"], ["hello world"]) == ("hel", "lo", 1)
    assert run(["ab", "abc"], ["xabc"]) == ("x", "ab", 1)


def test_a_possible_start_is_held_back_then_let_through() -> None:
    watch = StopStrings(["</end>"])
    assert watch.feed("a </") == "a "  # "</" may begin the stop
    assert watch.feed("b>") == "</b>"  # it did not
    assert watch.feed(" </en") == " "
    assert watch.flush() == "</en"  # the text ended first: nothing was a stop
    assert watch.matched is None


def test_no_stops_or_empty_ones_let_everything_through() -> None:
    assert run([], ["a", "b"]) == ("ab", None, 2)
    assert run([""], ["a", "b"]) == ("ab", None, 2)
