"""A stand-in for llama-cpp-python's Llama that writes a scripted reply, a character a token,
for unit tests of the embedded provider's logic (the real model is in tests/e2e)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

EOS = 0


class ScriptedLlama:
    """Enough of llama_cpp.Llama for the provider: it writes `reply`, a character a token."""

    def __init__(self, template: str, reply: str) -> None:
        self.metadata = {"tokenizer.chat_template": template}
        self.reply = reply
        self.prompts: list[str] = []

    def token_bos(self) -> int:
        return -1

    def token_eos(self) -> int:
        return EOS

    def n_ctx(self) -> int:
        return 100_000

    def tokenize(self, text: bytes, add_bos: bool = False, special: bool = False) -> list[int]:
        self.prompts.append(text.decode())
        return list(text)

    def detokenize(self, tokens: list[int], special: bool = False) -> bytes:
        return "".join(chr(t) for t in tokens if t != EOS).encode()

    def generate(self, tokens: list[int], **_: Any) -> Iterator[int]:
        yield from (ord(c) for c in self.reply)
        yield EOS


@pytest.fixture
def scripted_sampling(monkeypatch: pytest.MonkeyPatch) -> None:
    """The provider samples through llama.cpp's low-level API; here the stand-in writes."""

    def sample_tokens(llama: ScriptedLlama, prompt: list[int], *_: Any) -> Iterator[int]:
        return llama.generate(prompt)

    monkeypatch.setattr("farmhand.providers.llamacpp.provider.sample_tokens", sample_tokens)
