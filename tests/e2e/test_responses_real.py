"""The Responses dialect with the real embedded model behind a real `farmhand serve`: a
forced function call, its output sent back over previous_response_id, the answer streamed;
a `text.format` JSON Schema that the answer is held to; a forced call of a custom tool,
streamed as custom_tool_call_input deltas."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from openai import OpenAI
from pydantic import BaseModel
from tests.support.real_servers import free_port
from tests.support.serve_process import serving

pytestmark = pytest.mark.e2e

WEATHER = {
    "type": "function",
    "name": "get_weather",
    "description": "Get the current weather for a city.",
    "parameters": {
        "type": "object",
        "properties": {"city": {"type": "string", "description": "The city, e.g. Paris"}},
        "required": ["city"],
    },
}


def test_a_function_call_and_a_streamed_answer_with_the_embedded_model(tmp_path: Path) -> None:
    port = free_port()
    with serving("--port", str(port), cwd=tmp_path, env={"FARMHAND_API_KEYS": ""}):
        client = OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key="none", max_retries=0)
        forced = client.responses.create(
            model="default",
            instructions="You answer questions about the weather.",
            input="What is the weather in Paris?",
            tools=[WEATHER],
            tool_choice="required",
            max_output_tokens=64,
            temperature=0,
        )
        calls = [item for item in forced.output if item.type == "function_call"]
        assert calls, forced.output
        assert calls[0].name == "get_weather"
        assert isinstance(json.loads(calls[0].arguments).get("city"), str)

        output = {"type": "function_call_output", "call_id": calls[0].call_id, "output": "Sunny"}
        with client.responses.stream(
            model="default",
            previous_response_id=forced.id,
            input=[output],
            tools=[WEATHER],
            tool_choice="none",
            max_output_tokens=40,
            temperature=0,
        ) as stream:
            deltas = [e.delta for e in stream if e.type == "response.output_text.delta"]
            final = stream.get_final_response()
    assert deltas and "".join(deltas) == final.output_text
    assert final.status in ("completed", "incomplete")
    assert final.usage is not None and final.usage.output_tokens > 0


class Forecast(BaseModel):
    city: str
    temperature_celsius: int
    sunny: bool


def test_a_json_schema_text_format_holds_the_embedded_model_to_it(tmp_path: Path) -> None:
    port = free_port()
    with serving("--port", str(port), cwd=tmp_path, env={"FARMHAND_API_KEYS": ""}):
        client = OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key="none", max_retries=0)
        response = client.responses.parse(
            model="default",
            input="Paris is sunny at 24 degrees. Give the forecast.",
            text_format=Forecast,
            max_output_tokens=80,
            temperature=0,
            store=False,
        )
    assert response.status == "completed", response.output
    parsed = response.output_parsed
    assert isinstance(parsed, Forecast), response.output_text
    assert json.loads(response.output_text) == parsed.model_dump()


def test_a_forced_custom_tool_call_streams_its_input(tmp_path: Path) -> None:
    note_tool = {
        "type": "custom",
        "name": "write_note",
        "description": "Writes the given text to the user's notes.",
    }
    port = free_port()
    with serving("--port", str(port), cwd=tmp_path, env={"FARMHAND_API_KEYS": ""}):
        client = OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key="none", max_retries=0)
        with client.responses.stream(
            model="default",
            input="Note that the hay was delivered on Monday.",
            tools=[note_tool],  # type: ignore[list-item]
            tool_choice={"type": "custom", "name": "write_note"},
            max_output_tokens=80,
            temperature=0,
            store=False,
        ) as stream:
            events = list(stream)
            final = stream.get_final_response()
    calls = [item for item in final.output if item.type == "custom_tool_call"]
    assert calls, final.output
    assert calls[0].name == "write_note" and calls[0].input.strip(), calls[0]
    deltas = [e.delta for e in events if e.type == "response.custom_tool_call_input.delta"]
    assert "".join(deltas) == calls[0].input
