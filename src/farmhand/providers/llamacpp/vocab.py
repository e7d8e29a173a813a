"""What a loaded model's vocabulary says about its chat format: its BOS/EOS text, the
tokens that end a turn or open a message, and whether a text is one token."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def special_tokens(llama: Any) -> dict[str, str]:
    def text(token_id: int) -> str:
        if token_id < 0:
            return ""
        return str(llama.detokenize([token_id], special=True).decode("utf-8", "replace"))

    return {"bos": text(llama.token_bos()), "eos": text(llama.token_eos())}


def single_token(llama: Any, text: str) -> tuple[int, ...]:
    """`text` as one token of this model, or () where it takes several."""
    tokens = llama.tokenize(text.encode(), add_bos=False, special=True)
    return (int(tokens[0]),) if len(tokens) == 1 else ()


def end_tokens(llama: Any, is_end: Callable[[int], bool]) -> list[int]:
    """The end-of-turn tokens a chat reply ends with (EOS, and the template's own)."""
    found = [llama.token_eos()]
    for text in (b"<|im_end|>", b"<|endoftext|>", b"<|eot_id|>", b"<|end|>"):
        tokens = llama.tokenize(text, add_bos=False, special=True)
        if len(tokens) == 1:
            found.append(tokens[0])
    return [t for t in dict.fromkeys(found) if t >= 0 and is_end(t)]


def opener_tokens(llama: Any) -> list[int]:
    """The tokens that open a new chat message, where the model has them as one token."""
    openers = ("<|im_start|>", "<|start_header_id|>", "<|start|>")
    return [token for text in openers for token in single_token(llama, text)]


def end_of_generation_check(llama: Any) -> Callable[[int], bool]:
    """Use llama.cpp's own end-of-generation set (EOS, EOT, <|im_end|>, ...)."""
    try:
        import llama_cpp

        vocab = llama_cpp.llama_model_get_vocab(llama.model)
        return lambda token: bool(llama_cpp.llama_vocab_is_eog(vocab, token))
    except (ImportError, AttributeError):
        eos = llama.token_eos()
        return lambda token: token == eos
