"""Chat Completions `response_format` through the real `openai` SDK against a live app with
a scripted model: `chat.completions.parse` sends a pydantic model's JSON Schema, which
reaches the model's settings as the answer's shape, and reads the answer back into its
type; JSON mode asks for any JSON object, streamed too; a bad format is the SDK's
BadRequestError naming the field."""

from __future__ import annotations

import json

import openai
import pytest
from pydantic import BaseModel
from tests.support.farms import Farm

from farmhand.providers.scripted import Step


class Animal(BaseModel):
    animal: str
    legs: int


def test_parse_sends_the_schema_and_reads_the_answer_into_its_type(farm: Farm) -> None:
    farm.script.add(Step.text('{"animal": "cow", "legs": 4}'))
    reply = farm.client.chat.completions.parse(
        model="farm",
        messages=[{"role": "user", "content": "Name a farm animal."}],
        response_format=Animal,
    )
    assert reply.choices[0].message.parsed == Animal(animal="cow", legs=4)
    schema = farm.script.requests[0].settings.response_format
    assert isinstance(schema, dict) and schema["required"] == ["animal", "legs"]
    assert schema["properties"]["legs"]["type"] == "integer"
    assert schema["additionalProperties"] is False  # the SDK's strict schema, as sent


def test_json_mode_asks_for_json_streamed_or_not_and_text_is_free(farm: Farm) -> None:
    farm.script.add(Step.text('{"ok": true}'), Step.text('{"n": 1}'), Step.text("plain"))
    messages = [{"role": "user", "content": "JSON please"}]
    whole = farm.client.chat.completions.create(
        model="farm", messages=messages, response_format={"type": "json_object"}
    )
    streamed = farm.client.chat.completions.create(
        model="farm", messages=messages, response_format={"type": "json_object"}, stream=True
    )
    text = "".join(chunk.choices[0].delta.content or "" for chunk in streamed if chunk.choices)
    farm.client.chat.completions.create(
        model="farm", messages=messages, response_format={"type": "text"}
    )
    assert json.loads(whole.choices[0].message.content or "") == {"ok": True}
    assert json.loads(text) == {"n": 1}
    shapes = [request.settings.response_format for request in farm.script.requests]
    assert shapes == ["json", "json", None]


def test_a_bad_schema_is_a_bad_request_naming_the_field(farm: Farm) -> None:
    with pytest.raises(openai.BadRequestError) as raised:
        farm.client.chat.completions.create(
            model="farm",
            messages=[{"role": "user", "content": "x"}],
            response_format={
                "type": "json_schema",
                "json_schema": {"name": "animal", "schema": {"type": "animal"}},
            },
        )
    assert raised.value.param == "response_format.json_schema.schema"
    assert "not a valid JSON Schema" in raised.value.message
