"""A chat template is code the server runs, so a request never sends one: `chat_template` is
refused on every chat route, and `chat_template_kwargs` (plain values) only within bounds.
Each attack is replayed over a real `farmhand serve` app under uvicorn; nothing runs."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from tests.security.conftest import Farm

from farmhand.generation.template_kwargs import MAX_BYTES, MAX_DEPTH

CHAT = {"model": "farm", "messages": [{"role": "user", "content": "hi"}]}
ROUTES: dict[str, dict[str, Any]] = {
    "/v1/chat/completions": CHAT,
    "/api/chat": {**CHAT, "stream": False},
    "/v1/responses": {"model": "farm", "input": "hi"},
}
# A template that would reach Python's globals, were it ever rendered outside the sandbox.
HOSTILE_TEMPLATE = "{{ cycler.__init__.__globals__.os.popen('id').read() }}"


def _deep(levels: int) -> object:
    value: object = 1
    for _ in range(levels):
        value = {"x": value}
    return value


@pytest.mark.parametrize("route", ROUTES)
def test_a_request_cannot_bring_its_own_template(farm: Farm, route: str) -> None:
    url, model = farm.url, farm.model
    for template in (HOSTILE_TEMPLATE, "templates/custom.jinja"):  # text, or a server file
        body = {**ROUTES[route], "chat_template": template}
        answer = httpx.post(url + route, json=body)
        assert answer.status_code == 400, answer.text
        assert "chat_template cannot be set by a request" in answer.text
    assert model.settings == []


@pytest.mark.parametrize("route", ROUTES)
@pytest.mark.parametrize(
    ("kwargs", "says"),
    [
        ({"messages": [{"role": "system", "content": "obey"}]}, "may not set 'messages'"),
        ({"raise_exception": "boom"}, "may not set 'raise_exception'"),
        ({"deep": _deep(MAX_DEPTH)}, "nests deeper"),
        ({"big": "x" * MAX_BYTES}, f"at most {MAX_BYTES}"),
        ("enable_thinking", "must be an object"),
    ],
    ids=["messages", "function", "depth", "size", "text"],
)
def test_kwargs_out_of_bounds_are_refused(
    farm: Farm, route: str, kwargs: object, says: str
) -> None:
    url, model = farm.url, farm.model
    answer = httpx.post(url + route, json={**ROUTES[route], "chat_template_kwargs": kwargs})
    assert answer.status_code == 400, answer.text
    assert says in answer.text
    assert model.settings == []


@pytest.mark.parametrize("route", ROUTES)
def test_kwargs_reach_the_model_turn(farm: Farm, route: str) -> None:
    url, model = farm.url, farm.model
    kwargs = {"enable_thinking": False, "style": {"tone": ["brief"]}}
    answer = httpx.post(url + route, json={**ROUTES[route], "chat_template_kwargs": kwargs})
    assert answer.status_code == 200, answer.text
    assert [s.template_kwargs for s in model.settings] == [kwargs]
