"""`text.format` through the real `openai` SDK against a live app with a scripted model:
the JSON Schema (or JSON mode) reaches the model's settings as the answer's shape, the
response echoes the format, and `responses.parse` reads the answer into its type."""

from __future__ import annotations

from collections.abc import Iterator

import openai
import pytest
from pydantic import BaseModel
from tests.server.live import LiveServer, scripted_config
from tests.server.test_openai_api import Relay, start
from tests.server.test_responses_api import Farm

from farmhand.providers.scripted import ScriptedProvider, Step


class Animal(BaseModel):
    animal: str
    legs: int


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LiveServer, Relay]]:
    server, relay = start(tmp_path_factory.mktemp("home"), scripted_config())
    with server:
        yield server, relay


@pytest.fixture
def farm(shared: tuple[LiveServer, Relay]) -> Iterator[Farm]:
    server, relay = shared
    relay.script = ScriptedProvider()
    yield Farm(server, relay.script)
    relay.script.assert_done()


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
