"""Ollama's API with the real embedded model (Qwen2.5-Coder-1.5B, greedy) and the real
`ollama` SDK: `show` reads the GGUF's own template and header, `generate` and `chat` with a
JSON Schema `format` answer valid JSON (a grammar built from the schema), a raw generate
returns the `context` the next one continues, and `embed`/`embeddings` come from a second
llama.cpp context over the same file. One server for the module; answers are kept short."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator

import jsonschema
import ollama
import pytest
from tests.support.live import LiveServer

from farmhand.assembly import create_app
from farmhand.config.models import default_config
from farmhand.models.assemble import ensure_model
from farmhand.models.catalog import DEFAULT_MODEL
from farmhand.models.gguf import read_gguf

pytestmark = pytest.mark.e2e

SUM = {
    "type": "object",
    "properties": {"sum": {"type": "integer"}},
    "required": ["sum"],
    "additionalProperties": False,
}
GREEDY = {"temperature": 0, "seed": 7, "num_predict": 24}
HIDDEN = 1536  # Qwen2.5-1.5B's hidden size: the length of its embeddings


@pytest.fixture(scope="module")
def client() -> Iterator[ollama.Client]:
    with LiveServer(create_app(default_config(), api_keys=())) as server:
        yield ollama.Client(host=server.url, timeout=600)


def test_show_reads_the_gguf(client: ollama.Client) -> None:
    shown = client.show("default")
    header = read_gguf(ensure_model(DEFAULT_MODEL))
    assert shown.template == header.chat_template
    assert shown.template is not None and "<|im_start|>" in shown.template
    assert shown.details is not None
    assert (shown.details.format, shown.details.family) == ("gguf", "qwen2")
    assert shown.details.quantization_level == "Q4_K_M"
    assert shown.details.parameter_size == "1.5B"
    assert shown.capabilities == ["completion", "tools", "embedding"]  # no thinking
    info = shown.modelinfo or {}
    assert info["qwen2.context_length"] == 32768
    assert info["qwen2.embedding_length"] == HIDDEN
    with pytest.raises(ollama.ResponseError, match="'default' does not support thinking"):
        client.generate(model="default", prompt="hi", think=True)


def test_generate_and_chat_answer_the_schema(client: ollama.Client) -> None:
    generated = client.generate(
        model="default", prompt="What is 2 + 3? Answer in JSON.", format=SUM, options=GREEDY
    )
    answer = json.loads(generated.response)
    jsonschema.validate(answer, SUM)
    assert generated.context  # the embedded model has tokens to give back
    chatted = client.chat(
        model="default",
        messages=[{"role": "user", "content": "What is 4 + 4? Answer in JSON."}],
        format=SUM,
        options=GREEDY,
    )
    jsonschema.validate(json.loads(chatted.message.content or ""), SUM)
    loaded = [m.model for m in client.ps().models]
    assert loaded == ["default"]


def test_raw_generate_continues_its_context(client: ollama.Client) -> None:
    first = list(
        client.generate(
            model="default",
            prompt="def add(a, b):\n    return",
            raw=True,
            stream=True,
            options={**GREEDY, "num_predict": 6, "stop": ["\n"]},
        )
    )
    text = "".join(p.response or "" for p in first)
    assert "a + b" in text
    final = first[-1]
    assert final.done and final.context
    follow = client.generate(
        model="default",
        prompt="\n\ndef sub(a, b):\n    return",
        raw=True,
        context=final.context,
        options={**GREEDY, "num_predict": 6, "stop": ["\n"]},
    )
    assert "a - b" in follow.response
    assert len(follow.context or []) > len(final.context)


def test_embeddings(client: ollama.Client) -> None:
    embedded = client.embed(model="default", input=["a cat", "a small kitten"])
    assert [len(v) for v in embedded.embeddings] == [HIDDEN, HIDDEN]
    for vector in embedded.embeddings:
        assert math.isclose(math.sqrt(sum(x * x for x in vector)), 1.0, rel_tol=1e-4)
    assert embedded.prompt_eval_count is not None and embedded.prompt_eval_count > 0
    legacy = client.embeddings(model="default", prompt="a cat")
    assert len(legacy.embedding) == HIDDEN
    norm = math.sqrt(sum(x * x for x in legacy.embedding))
    # The same text: the legacy vector is the normalised one before normalising.
    assert [x / norm for x in legacy.embedding] == pytest.approx(embedded.embeddings[0], abs=1e-4)
    shorter = client.embed(model="default", input="a cat", dimensions=64)
    assert len(shorter.embeddings[0]) == 64
