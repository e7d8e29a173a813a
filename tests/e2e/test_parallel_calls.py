"""Several calls in one turn from the real embedded model, as it ships (greedy).

The default model writes each call as fenced JSON and, left alone, ends its turn after the
first. The call gate pushes on once the call's fence is closed (`providers/llamacpp/call_gate.py`);
pushing before it (where the parser reads the call) took the closing fence for a new call's
start and the model ended after one call of two.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from farmhand.messages import Message, ToolCallEvent
from farmhand.models.assemble import ensure_model
from farmhand.models.catalog import DEFAULT_MODEL
from farmhand.providers.base import GenerationSettings
from farmhand.providers.llamacpp import LlamaCppProvider
from farmhand.providers.llamacpp.load import load_llama
from farmhand.tools.definition import ToolDefinition

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]

AVAILABILITY = ToolDefinition(
    "check_instrument_availability",
    "Check whether a music store in a city has an instrument in stock, and its price.",
    {
        "type": "object",
        "properties": {
            "instrument": {"type": "string", "description": "Name of the instrument."},
            "city": {"type": "string", "description": "City of the store."},
        },
        "required": ["instrument", "city"],
    },
)


@pytest.fixture(scope="module")
def llama() -> Iterator[Any]:
    model = load_llama(ensure_model(DEFAULT_MODEL))
    yield model
    model.close()


async def test_a_question_about_two_cities_gets_two_calls(llama: Any) -> None:
    provider = LlamaCppProvider(llama)
    question = [
        Message.user("Find the price and stock of a Yamaha P125 piano in Berlin and Madrid.")
    ]
    settings = GenerationSettings(temperature=0, seed=0)
    events = [e async for e in provider.stream(question, [AVAILABILITY], settings)]
    calls = [e.call for e in events if isinstance(e, ToolCallEvent)]
    assert sorted(c.arguments.get("city") for c in calls) == ["Berlin", "Madrid"]
    assert all("P125" in str(c.arguments.get("instrument")) for c in calls)
