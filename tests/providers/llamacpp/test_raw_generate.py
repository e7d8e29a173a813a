"""The embedded provider's pieces for Ollama's generate: raw text continued as it is, stop
strings (of many tokens too) ending the turn and named in its Finish,
`think` handed to the chat template, and `context` tokens turned back into text. The model
is tests/support/scripted_llama's stand-in (a character a token)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from tests.support.gguf_files import TEMPLATE
from tests.support.scripted_llama import ScriptedLlama

from farmhand.errors import RequestError
from farmhand.messages import Finish, Message, StreamEvent, TextDelta, Usage
from farmhand.providers.base import GenerationSettings
from farmhand.providers.llamacpp import LlamaCppProvider

pytestmark = pytest.mark.anyio


class Llama(ScriptedLlama):
    def n_vocab(self) -> int:
        return 0x110000  # every character is a token


@pytest.fixture(autouse=True)
def scripted_sampling(monkeypatch: pytest.MonkeyPatch) -> None:
    def sample_tokens(llama: Llama, prompt: list[int], *_: Any) -> Iterator[int]:
        return llama.generate(prompt)

    monkeypatch.setattr("farmhand.providers.llamacpp.provider.sample_tokens", sample_tokens)


async def test_raw_text_is_continued_as_it_is() -> None:
    llama = Llama(TEMPLATE, " return a + b")
    provider = LlamaCppProvider(llama)
    prompt = "def add(a, b):\n   "
    events = [e async for e in provider.complete(prompt, GenerationSettings(stop=("+",)))]
    assert llama.prompts[-1] == prompt  # no chat template around it
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == " return a "
    assert events[-1] == Finish("stop", Usage(len(prompt), 10), stop_sequence="+")


def answer(events: list[StreamEvent]) -> str:
    return "".join(e.text for e in events if isinstance(e, TextDelta))


async def test_a_stop_string_of_many_tokens_ends_the_turn_and_is_named() -> None:
    provider = LlamaCppProvider(Llama(TEMPLATE, "Four.\n\nUser: and five?"))
    settings = GenerationSettings(stop=("\n\nUser:", "STOP"))
    events = [e async for e in provider.stream([Message.user("2+2?")], [], settings)]
    assert answer(events) == "Four."  # a character a token: the stop spans 8 of them
    finish = events[-1]
    assert isinstance(finish, Finish) and finish.stop_sequence == "\n\nUser:"
    assert finish.reason == "stop"


async def test_text_that_only_began_a_stop_is_all_written() -> None:
    provider = LlamaCppProvider(Llama(TEMPLATE, "Four.\n\nUs"))
    settings = GenerationSettings(stop=("\n\nUser:",))
    events = [e async for e in provider.stream([Message.user("2+2?")], [], settings)]
    assert answer(events) == "Four.\n\nUs"
    finish = events[-1]
    assert isinstance(finish, Finish)
    assert (finish.reason, finish.stop_sequence, finish.usage.completion_tokens) == (
        "stop",
        None,
        len("Four.\n\nUs"),  # the held-back tail counted once it is let through
    )


async def test_think_reaches_the_template() -> None:
    provider = LlamaCppProvider(Llama(TEMPLATE, "ok"))
    question = [Message.user("Why?")]
    assert provider.render(question, [], think=False).endswith("<think></think>")
    assert "<think>" not in provider.render(question, [], think=True)
    assert "<think>" not in provider.render(question, [])


def test_context_tokens_become_text_again() -> None:
    provider = LlamaCppProvider(Llama(TEMPLATE, ""))
    tokens = provider.tokenize("Hello, world")
    assert provider.text_of(tokens) == "Hello, world"
    with pytest.raises(RequestError, match="context holds -3, which is not a token") as raised:
        provider.text_of([72, -3])
    assert raised.value.param == "context"
