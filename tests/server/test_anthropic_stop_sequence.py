"""Anthropic's `stop_reason: "stop_sequence"` through the real `anthropic` SDK against a live
app with a scripted model: a turn the provider says one of the request's stop_sequences
ended names it, whole and streamed (`message_delta`); a turn without one is end_turn."""

from __future__ import annotations

from tests.support.farms import AnthropicFarm

from farmhand.messages import Finish, StreamEvent, TextDelta, Usage

STOPS = ["\n\nHuman:", "END"]


def stopped_at(stop: str | None) -> list[StreamEvent]:
    return [TextDelta("Four."), Finish("stop", Usage(5, 2), stop_sequence=stop)]


def test_the_stop_sequence_that_ended_the_turn_is_named(anthropic_farm: AnthropicFarm) -> None:
    anthropic_farm.script.add(stopped_at("END"), stopped_at(None))
    stopped = anthropic_farm.ask(stop_sequences=STOPS)
    assert (stopped.stop_reason, stopped.stop_sequence) == ("stop_sequence", "END")
    assert [(b.type, b.text) for b in stopped.content] == [("text", "Four.")]
    assert anthropic_farm.script.requests[0].settings.stop == tuple(STOPS)
    ended = anthropic_farm.ask(stop_sequences=STOPS)
    assert (ended.stop_reason, ended.stop_sequence) == ("end_turn", None)


def test_a_streamed_reply_names_it_in_message_delta(anthropic_farm: AnthropicFarm) -> None:
    anthropic_farm.script.add(stopped_at("\n\nHuman:"))
    with anthropic_farm.client.messages.stream(
        model="farm",
        max_tokens=100,
        messages=[{"role": "user", "content": "2+2?"}],
        stop_sequences=STOPS,
    ) as stream:
        events = list(stream)
        final = stream.get_final_message()
    (delta,) = [e for e in events if e.type == "message_delta"]
    assert (delta.delta.stop_reason, delta.delta.stop_sequence) == ("stop_sequence", "\n\nHuman:")
    start = next(e for e in events if e.type == "message_start")
    assert (start.message.stop_reason, start.message.stop_sequence) == (None, None)
    assert (final.stop_reason, final.stop_sequence) == ("stop_sequence", "\n\nHuman:")
    assert final.content[0].type == "text" and final.content[0].text == "Four."
