"""`text.format` and `item_reference` through the real `openai` SDK against a live app
with a scripted model: the JSON Schema (or JSON mode) reaches the model's settings as the
answer's shape, the response echoes the format, and `responses.parse` reads the answer
into its type; an item_reference is the stored item it names, or a 400 naming its id."""

from __future__ import annotations

import json
from collections.abc import Sequence

import openai
import pytest
from pydantic import BaseModel
from tests.server.test_responses_api import WEATHER
from tests.support.farms import Farm

from farmhand.messages import Message, ToolCall
from farmhand.providers.scripted import Step
from farmhand.tools.definition import ToolDefinition


class Animal(BaseModel):
    animal: str
    legs: int


def test_a_json_schema_format_shapes_the_answer_and_parse_reads_it(farm: Farm) -> None:
    farm.script.add(Step.text('{"animal": "cow", "legs": 4}'))
    response = farm.client.responses.parse(
        model="farm", input="Name a farm animal.", text_format=Animal, store=False
    )
    assert response.output_parsed == Animal(animal="cow", legs=4)
    schema = farm.script.requests[0].settings.response_format
    assert isinstance(schema, dict) and schema["required"] == ["animal", "legs"]
    assert schema["properties"]["legs"]["type"] == "integer"
    assert response.text is not None and response.text.format is not None
    echoed = response.text.format
    assert echoed.type == "json_schema" and echoed.name == "Animal"
    assert echoed.schema_ == schema and echoed.strict is True


def test_json_object_mode_asks_for_json_and_text_is_free(farm: Farm) -> None:
    farm.script.add(Step.text('{"ok": true}'), Step.text("plain"))
    json_mode = farm.client.responses.create(
        model="farm", input="JSON please", text={"format": {"type": "json_object"}}, store=False
    )
    plain = farm.client.responses.create(model="farm", input="hi", store=False)
    first, second = farm.script.requests
    assert (first.settings.response_format, second.settings.response_format) == ("json", None)
    assert json_mode.text is not None and json_mode.text.format is not None
    assert json_mode.text.format.type == "json_object"
    assert plain.text is not None and plain.text.format is not None
    assert plain.text.format.type == "text"


def test_a_schema_that_is_not_json_schema_is_a_400_naming_the_field(farm: Farm) -> None:
    form = {"type": "json_schema", "name": "bad", "schema": {"type": "shape"}}
    with pytest.raises(openai.BadRequestError, match="not a valid JSON Schema") as caught:
        farm.client.responses.create(model="farm", input="x", text={"format": form})  # type: ignore[typeddict-item]
    assert caught.value.body["param"] == "text.format.schema"  # type: ignore[index]


# item_reference


def test_item_references_are_the_stored_items_they_name(farm: Farm) -> None:
    farm.script.add(Step.calls(ToolCall("get_weather", {"city": "Oslo"}, "call_r1")))
    first = farm.client.responses.create(model="farm", input="Weather in Oslo?", tools=[WEATHER])
    (call,) = first.output
    assert call.type == "function_call" and call.id is not None

    def sees_the_call(messages: Sequence[Message], _: Sequence[ToolDefinition]) -> None:
        assert [m.role for m in messages] == ["user", "assistant", "tool"]
        assert messages[1].tool_calls == (ToolCall("get_weather", {"city": "Oslo"}, "call_r1"),)
        assert (messages[2].tool_call_id, messages[2].content) == ("call_r1", "Rain")

    farm.script.add(Step.text("It rains in Oslo.", expect=sees_the_call))
    second = farm.client.responses.create(
        model="farm",
        input=[
            {"type": "message", "role": "user", "content": "Weather in Oslo?"},
            {"type": "item_reference", "id": call.id},
            {"type": "function_call_output", "call_id": "call_r1", "output": "Rain"},
        ],
        tools=[WEATHER],
    )
    assert second.output_text == "It rains in Oslo."
    kept = farm.client.responses.input_items.list(second.id, order="asc").data
    assert [item.type for item in kept] == ["message", "function_call", "function_call_output"]
    referenced = kept[1]
    assert referenced.type == "function_call" and referenced.id == call.id
    assert json.loads(referenced.arguments) == {"city": "Oslo"}


def test_an_unknown_item_reference_is_a_400_naming_its_id(farm: Farm) -> None:
    with pytest.raises(openai.BadRequestError, match="'msg_gone' names no stored item") as caught:
        farm.client.responses.create(
            model="farm", input=[{"type": "item_reference", "id": "msg_gone"}]
        )
    assert caught.value.status_code == 400
    assert caught.value.body["param"] == "input"  # type: ignore[index]


def test_input_messages_are_listed_with_a_type_and_an_id_that_stays(farm: Farm) -> None:
    farm.script.add(Step.text("Hi Ada."), Step.text("Ada."))
    first = farm.client.responses.create(
        model="farm",
        input=[
            {"role": "developer", "content": "Be brief."},
            {"role": "user", "content": "I am Ada."},
        ],
    )
    listed = farm.client.responses.input_items.list(first.id, order="asc").data
    assert [(item.type, item.role) for item in listed] == [  # type: ignore[union-attr]
        ("message", "developer"),
        ("message", "user"),
    ]
    ids = [item.id for item in listed]
    assert all(i.startswith("msg_") for i in ids) and len(set(ids)) == 2
    assert listed[1].content[0].type == "input_text"  # type: ignore[union-attr]
    assert listed[1].content[0].text == "I am Ada."  # type: ignore[union-attr]
    again = farm.client.responses.input_items.list(first.id, order="desc").data
    assert [item.id for item in again] == ids[::-1]
    # The ids name the stored items: a reference to one, and the continued conversation.
    second = farm.client.responses.create(
        model="farm",
        input=[{"type": "item_reference", "id": ids[1]}],
        previous_response_id=first.id,
    )
    kept = farm.client.responses.input_items.list(second.id, order="asc").data
    assert [item.id for item in kept][:2] == ids and kept[-1].id == ids[1]
    seen = [(m.role, m.content) for m in farm.script.requests[1].messages]
    assert seen[-1] == ("user", "I am Ada.")
