"""The Responses renderer: an event shows its item as it was when the event was written,
whatever the later events add to it."""

from __future__ import annotations

from farmhand.dialects.responses_render import ResponseBuilder
from farmhand.dialects.responses_request import parse_responses
from farmhand.messages import Usage
from farmhand.runtime.events import LoopFinished, ReasoningChunk, TextChunk


def test_an_added_item_is_shown_as_it_was_when_added() -> None:
    builder = ResponseBuilder(parse_responses({"model": "m", "input": "hay?"}))
    events = [*builder.opening()]
    for event in (ReasoningChunk("Think"), TextChunk("Hay "), TextChunk("is dry.")):
        events += builder.render(event)
    events += builder.render(LoopFinished("Hay is dry.", "stop", 0, Usage(1, 1), ()))
    added = [e["item"] for e in events if e["type"] == "response.output_item.added"]
    done = [e["item"] for e in events if e["type"] == "response.output_item.done"]
    assert [item["type"] for item in added] == ["reasoning", "message"]
    assert all(item["status"] == "in_progress" for item in added)
    assert [item["content"] for item in added] == [[], []]  # the parts come after
    assert [item["status"] for item in done] == ["completed", "completed"]
    assert done[1]["content"][0]["text"] == "Hay is dry."
    assert done[0]["content"][0]["text"] == "Think"
