"""`/api/generate` and the Ollama options of `/api/chat` against a running server, with the
real `ollama` SDK and a scripted provider: what reaches the model (messages, settings),
what comes back, and every mistake answered as a 400 `{"error": ...}` that says what to fix."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import ollama
import pytest
from tests.server.ollama_serving import make_config, serving

from farmhand.errors import ProviderError
from farmhand.messages import Message, Usage
from farmhand.providers.scripted import ScriptedProvider, Step

PERSON = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
    "required": ["name", "age"],
}


@pytest.fixture
def provider() -> ScriptedProvider:
    return ScriptedProvider()


@pytest.fixture
def base_url(provider: ScriptedProvider, tmp_path: Path) -> Iterator[str]:
    with serving(make_config(), provider, tmp_path / "home") as url:
        yield url
    provider.assert_done()


@pytest.fixture
def client(base_url: str) -> ollama.Client:
    return ollama.Client(host=base_url)


def post(base_url: str, path: str, body: object) -> httpx.Response:
    return httpx.post(f"{base_url}{path}", json=body, timeout=60)


def error_of(response: httpx.Response, status: int = 400) -> str:
    assert response.status_code == status, response.text
    body = response.json()
    assert list(body) == ["error"]
    message: str = body["error"]
    return message


# /api/generate


def test_generate_without_streaming(client: ollama.Client, provider: ScriptedProvider) -> None:
    provider.add(Step.text("Blue, mostly.", usage=Usage(9, 4)))
    answer = client.generate(model="scripted", prompt="Sky colour?", system="Be brief.")
    assert answer.response == "Blue, mostly."
    assert answer.done is True and answer.done_reason == "stop"
    assert answer.prompt_eval_count == 9 and answer.eval_count == 4
    assert answer.total_duration is not None and answer.total_duration > 0
    assert answer.context is None  # a backend without tokens has no context to give
    sent = provider.requests[0]
    assert sent.messages == (Message.system("Be brief."), Message.user("Sky colour?"))
    assert sent.tools == ()  # generate offers no tools, whatever the model's servers


def test_generate_streams_by_default(client: ollama.Client, provider: ScriptedProvider) -> None:
    provider.add(Step.text("One two three four five.", reasoning="Counting up."))
    parts = list(client.generate(model="scripted", prompt="Count.", stream=True))
    assert "".join(p.response or "" for p in parts) == "One two three four five."
    assert "".join(p.thinking or "" for p in parts) == "Counting up."
    assert len([p for p in parts if p.response]) > 1  # really streamed
    assert [p.done for p in parts] == [False] * (len(parts) - 1) + [True]
    assert parts[-1].done_reason == "stop"


def test_generate_maps_options_format_and_think(
    client: ollama.Client, provider: ScriptedProvider
) -> None:
    provider.add(Step.text('{"name": "Ann", "age": 3}'))
    options = {"temperature": 0.4, "top_p": 0.8, "top_k": 20, "seed": 7, "num_predict": 64}
    answer = client.generate(
        model="scripted",
        prompt="A person.",
        format=PERSON,
        think=True,
        options={**options, "stop": ["\n\n"], "repeat_penalty": 1.1},
    )
    assert json.loads(answer.response) == {"name": "Ann", "age": 3}
    settings = provider.requests[0].settings
    assert (settings.temperature, settings.top_p, settings.top_k) == (0.4, 0.8, 20)
    assert (settings.seed, settings.max_tokens, settings.stop) == (7, 64, ("\n\n",))
    assert settings.response_format == PERSON
    assert settings.think is True


def test_generate_format_json_and_no_limit(
    client: ollama.Client, provider: ScriptedProvider
) -> None:
    provider.add(Step.text("{}"))
    client.generate(model="scripted", prompt="x", format="json", options={"num_predict": -1})
    settings = provider.requests[0].settings
    assert settings.response_format == "json"
    assert settings.max_tokens is None  # -1: no limit


def test_empty_prompt_loads_and_keep_alive_zero_unloads(client: ollama.Client) -> None:
    assert client.ps().models == []
    loaded = client.generate(model="scripted", prompt="")
    assert (loaded.done, loaded.done_reason, loaded.response) == (True, "load", "")
    assert [m.model for m in client.ps().models] == ["scripted"]
    unloaded = client.generate(model="scripted", prompt="", keep_alive=0)
    assert unloaded.done_reason == "unload"
    assert client.ps().models == []


def test_ps_shows_keep_alive(client: ollama.Client, provider: ScriptedProvider) -> None:
    provider.add(Step.text("ok"))
    client.generate(model="scripted", prompt="hi", keep_alive="10m")
    (running,) = client.ps().models
    assert running.model == running.name == "scripted"
    assert running.size_vram == 0
    assert running.details is not None and running.details.family == "openai"
    assert running.expires_at is not None
    left = running.expires_at.timestamp() - time.time()
    assert 500 < left <= 600
    client.generate(model="scripted", prompt="", keep_alive=-1)
    (forever,) = client.ps().models
    assert forever.expires_at is not None and forever.expires_at.year > 2300
    client.generate(model="scripted", prompt="", keep_alive="1ms")
    time.sleep(0.01)  # past its keep_alive: the next look unloads it
    assert client.ps().models == []


def test_a_backend_failure_before_the_first_line_is_a_502(
    base_url: str, provider: ScriptedProvider
) -> None:
    provider.add(Step.fail(ProviderError("the backend fell over")))
    response = post(base_url, "/api/generate", {"model": "scripted", "prompt": "go"})
    assert "the backend fell over" in error_of(response, 502)


@pytest.mark.parametrize(
    ("body", "says"),
    [
        ({"prompt": "hi"}, "model is required"),
        ({"model": "nope", "prompt": "hi"}, "unknown model 'nope'"),
        ({"model": "scripted", "prompt": "hi", "images": ["aGk="]}, "has no vision"),
        ({"model": "scripted", "prompt": "hi", "suffix": "end"}, "suffix"),
        ({"model": "scripted", "prompt": "hi", "raw": True}, "needs the embedded model"),
        ({"model": "scripted", "prompt": "hi", "context": [1, 2]}, "needs the embedded model"),
        ({"model": "scripted", "prompt": "hi", "format": "xml"}, 'format must be "json"'),
        (
            {"model": "scripted", "prompt": "hi", "format": {"type": 12}},
            "format is not a valid JSON Schema",
        ),
        ({"model": "scripted", "prompt": "hi", "keep_alive": "soon"}, "keep_alive must be"),
        ({"model": "scripted", "prompt": "hi", "think": "very"}, "think must be"),
        (
            {"model": "scripted", "prompt": "hi", "options": {"num_ctx": 8192}},
            "num_ctx 8192",
        ),
        ({"model": "scripted", "prompt": "hi", "options": {"top_p": 3}}, "options.top_p"),
        ({"model": "scripted", "prompt": "hi", "stream": "yes"}, "stream"),
        (
            {"model": "scripted", "prompt": "hi", "template": "{{ range .Messages }}{{ end }}"},
            "template: {{ range .Messages }} is not supported",
        ),
        (
            {"model": "scripted", "prompt": "hi", "template": "{{ .Prompt }}", "raw": True},
            "raw and template exclude each other",
        ),
    ],
)
def test_generate_mistakes_are_400s(base_url: str, body: dict[str, Any], says: str) -> None:
    response = post(base_url, "/api/generate", body)
    status = 404 if body.get("model") == "nope" else 400
    assert says in error_of(response, status)


def test_the_sdk_raises_with_the_message(client: ollama.Client) -> None:
    with pytest.raises(ollama.ResponseError) as raised:
        client.generate(model="scripted", prompt="look", images=["aGk="])
    assert raised.value.status_code == 400
    assert "model 'scripted' has no vision" in raised.value.error


# /api/chat: think, format, options, keep_alive


def test_chat_maps_think_format_and_options(
    client: ollama.Client, provider: ScriptedProvider
) -> None:
    provider.add(Step.text('{"name": "Bo", "age": 40}', reasoning="A plausible person."))
    response = client.chat(
        model="scripted",
        messages=[{"role": "user", "content": "A person."}],
        think=True,
        format=PERSON,
        options={"temperature": 0, "top_k": 5, "top_p": 0.5, "seed": 1, "num_predict": 30},
    )
    assert json.loads(response.message.content or "") == {"name": "Bo", "age": 40}
    assert response.message.thinking == "A plausible person."
    settings = provider.requests[0].settings
    assert settings.response_format == PERSON and settings.think is True
    assert (settings.temperature, settings.top_k, settings.top_p) == (0, 5, 0.5)
    assert (settings.seed, settings.max_tokens) == (1, 30)


def test_chat_keep_alive_zero_unloads_after_the_answer(
    client: ollama.Client, provider: ScriptedProvider
) -> None:
    provider.add(Step.text("Loaded."), Step.text("Gone after this."))
    client.chat(model="scripted", messages=[{"role": "user", "content": "hi"}])
    assert [m.model for m in client.ps().models] == ["scripted"]
    parts = list(
        client.chat(
            model="scripted",
            messages=[{"role": "user", "content": "bye"}],
            keep_alive=0,
            stream=True,
        )
    )
    assert parts[-1].done is True
    assert client.ps().models == []


def test_chat_without_messages_loads_and_unloads(client: ollama.Client) -> None:
    loaded = client.chat(model="scripted", messages=[])
    assert (loaded.done, loaded.done_reason, loaded.message.content) == (True, "load", "")
    assert [m.model for m in client.ps().models] == ["scripted"]
    unloaded = client.chat(model="scripted", messages=[], keep_alive=0)
    assert unloaded.done_reason == "unload"
    assert client.ps().models == []
    with pytest.raises(ollama.ResponseError, match="unknown model 'nope'"):
        client.chat(model="nope", messages=[])


@pytest.mark.parametrize(
    ("fields", "says"),
    [
        ({"format": "yaml"}, 'format must be "json"'),
        ({"keep_alive": [5]}, "keep_alive must be"),
        ({"options": {"num_ctx": 2048}}, "num_ctx 2048"),
        (
            {"messages": [{"role": "user", "content": "see", "images": ["aGk="]}]},
            "messages[0].images: model 'scripted' has no vision",
        ),
    ],
)
def test_chat_option_mistakes_are_400s(base_url: str, fields: dict[str, Any], says: str) -> None:
    body = {"model": "scripted", "messages": [{"role": "user", "content": "hi"}], "stream": False}
    response = post(base_url, "/api/chat", {**body, **fields})
    assert says in error_of(response)
