"""A sentence-transformers BERT model (its `model.safetensors`, `config.json`, WordPiece
`vocab.txt`, tokenizer and pooling configs) written once as a GGUF that llama.cpp runs as an
embedding model: architecture `bert`, bidirectional attention, mean (or CLS) pooling.

The layout is llama.cpp's for BERT: the weights under its tensor names (`token_embd`,
`position_embd`, `blk.N.attn_q`, ...), the vocabulary as `tokenizer.ggml.model = bert`.
Its WordPiece tokenizer lowercases, splits words, and looks each word up with U+2581 in
front, so a word-initial piece is stored with that mark and a continuation piece (`##ing`)
without its `##`; bracketed special tokens (`[CLS]`, `[SEP]`, ...) are kept as they are.
It puts the BOS token ([CLS]) before a text and the separator ([SEP]) after it, as the
model was trained. Weights stay float32: the model is small (22M parameters for MiniLM-L6)
and its vectors then match sentence-transformers' own (tests/rag/test_sentence_model.py).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gguf
import numpy as np
from safetensors.numpy import load_file

from farmhand.errors import ModelError
from farmhand.models.model_file import written_in_place

ARCHITECTURE = "bert"
WORD_START = "\u2581"
"""What llama.cpp's WordPiece tokenizer puts before each word it looks up."""

EMBEDDING_TENSORS = {
    "embeddings.word_embeddings.weight": "token_embd.weight",
    "embeddings.token_type_embeddings.weight": "token_types.weight",
    "embeddings.position_embeddings.weight": "position_embd.weight",
    "embeddings.LayerNorm.weight": "token_embd_norm.weight",
    "embeddings.LayerNorm.bias": "token_embd_norm.bias",
}
LAYER_TENSORS = {
    "attention.self.query": "attn_q",
    "attention.self.key": "attn_k",
    "attention.self.value": "attn_v",
    "attention.output.dense": "attn_output",
    "attention.output.LayerNorm": "attn_output_norm",
    "intermediate.dense": "ffn_up",
    "output.dense": "ffn_down",
    "output.LayerNorm": "layer_output_norm",
}
"""`encoder.layer.N.<key>.weight|bias` -> `blk.N.<value>.weight|bias`."""
UNUSED_TENSORS = ("embeddings.position_ids", "pooler.")
"""Not weights (the position ids), or a head that mean pooling does not use (the pooler)."""

POOLING = {
    "pooling_mode_mean_tokens": gguf.PoolingType.MEAN,
    "pooling_mode_cls_token": gguf.PoolingType.CLS,
}
SPECIAL_TOKENS = ("cls", "sep", "unk", "pad", "mask")


@dataclass(frozen=True)
class BertFacts:
    """What the GGUF's header says, read from the model's config files."""

    layers: int
    width: int
    feed_forward: int
    heads: int
    positions: int
    token_types: int
    norm_eps: float
    pooling: gguf.PoolingType
    tokens: list[str]
    token_types_of_vocab: list[int]
    special: dict[str, int]


def convert_bert(folder: Path, dest: Path, *, name: str) -> Path:
    """Write the sentence-transformers model in `folder` as the GGUF `dest` (atomically: a
    temp file renamed into place). ModelError when a file is missing or the model is not a
    plain uncased BERT with mean or CLS pooling (what llama.cpp's `bert` runs)."""
    facts = read_facts(folder)
    weights = folder / "model.safetensors"
    try:
        tensors = load_file(weights)
    except (OSError, ValueError) as exc:  # safetensors raises its own error, a ValueError
        raise ModelError(f"cannot read {weights}: {exc}") from None
    with written_in_place(dest) as tmp:
        writer = gguf.GGUFWriter(tmp, ARCHITECTURE)
        write_header(writer, facts, name)
        for gguf_name, array in gguf_tensors(tensors, facts.layers):
            writer.add_tensor(gguf_name, array)
        writer.write_header_to_file()
        writer.write_kv_data_to_file()
        writer.write_tensors_to_file()
        writer.close()
    return dest


def read_facts(folder: Path) -> BertFacts:
    config = _json(folder / "config.json")
    if config.get("model_type") != "bert" or config.get("hidden_act") != "gelu":
        raise ModelError(
            f"{folder} is not a BERT model with GELU activations (model_type"
            f" {config.get('model_type')!r}); farmhand converts only those"
        )
    if config.get("position_embedding_type", "absolute") != "absolute":
        raise ModelError(f"{folder}: only absolute position embeddings can be converted")
    tokenizer = _json(folder / "tokenizer_config.json")
    if tokenizer.get("do_lower_case") is False:
        raise ModelError(f"{folder}: a cased BERT cannot run on llama.cpp, which lowercases")
    tokens, special = _vocabulary(folder / "vocab.txt", tokenizer)
    control = set(special.values())
    types = [
        gguf.TokenType.CONTROL if i in control else gguf.TokenType.NORMAL
        for i in range(len(tokens))
    ]
    pieces = [_as_llama_piece(t) for t in tokens]
    if len(set(pieces)) != len(pieces):  # llama.cpp aborts on a vocabulary with repeats
        raise ModelError(f"{folder}/vocab.txt holds a token twice (as llama.cpp spells it)")
    try:
        return BertFacts(
            layers=int(config["num_hidden_layers"]),
            width=int(config["hidden_size"]),
            feed_forward=int(config["intermediate_size"]),
            heads=int(config["num_attention_heads"]),
            positions=int(config["max_position_embeddings"]),
            token_types=int(config.get("type_vocab_size", 2)),
            norm_eps=float(config.get("layer_norm_eps", 1e-12)),
            pooling=_pooling(folder / "1_Pooling" / "config.json"),
            tokens=pieces,
            token_types_of_vocab=[int(t) for t in types],
            special=special,
        )
    except KeyError as exc:
        raise ModelError(f"{folder}/config.json has no {exc.args[0]}") from None
    except (TypeError, ValueError) as exc:
        raise ModelError(f"{folder}/config.json has a value of the wrong kind: {exc}") from None


def write_header(writer: gguf.GGUFWriter, facts: BertFacts, name: str) -> None:
    writer.add_name(name)
    writer.add_file_type(gguf.LlamaFileType.ALL_F32)
    writer.add_context_length(facts.positions)
    writer.add_embedding_length(facts.width)
    writer.add_feed_forward_length(facts.feed_forward)
    writer.add_block_count(facts.layers)
    writer.add_head_count(facts.heads)
    writer.add_layer_norm_eps(facts.norm_eps)
    writer.add_causal_attention(False)  # llama.cpp's default is causal
    writer.add_pooling_type(facts.pooling)
    writer.add_tokenizer_model("bert")
    writer.add_token_list(facts.tokens)
    writer.add_token_types(facts.token_types_of_vocab)
    writer.add_token_type_count(facts.token_types)
    # [CLS] is the BOS llama.cpp puts first; [SEP] the separator it puts last.
    writer.add_bos_token_id(facts.special["cls"])
    writer.add_sep_token_id(facts.special["sep"])
    writer.add_unk_token_id(facts.special["unk"])
    writer.add_pad_token_id(facts.special["pad"])
    writer.add_mask_token_id(facts.special["mask"])
    writer.add_add_bos_token(True)
    writer.add_add_eos_token(False)


def gguf_tensors(tensors: dict[str, np.ndarray], layers: int) -> Iterator[tuple[str, np.ndarray]]:
    """Each weight under its llama.cpp name, as float32 (numpy's row-major shape is what the
    writer expects: it reverses it into ggml's order). ModelError for a weight that has no
    place in llama.cpp's BERT, or for one it needs that is missing."""
    wanted = set(EMBEDDING_TENSORS.values()) | {
        f"blk.{i}.{part}.{kind}"
        for i in range(layers)
        for part in LAYER_TENSORS.values()
        for kind in ("weight", "bias")
    }
    seen: set[str] = set()
    for hf_name, array in tensors.items():
        target = gguf_name(hf_name.removeprefix("bert."))
        if target is None:
            continue
        seen.add(target)
        yield target, np.ascontiguousarray(array, dtype=np.float32)
    missing = sorted(wanted - seen)
    if missing:
        raise ModelError(f"the model's weights lack {', '.join(missing[:5])}")


def gguf_name(hf_name: str) -> str | None:
    """llama.cpp's name for a weight of a Hugging Face BertModel; None for one it does not
    use; ModelError for one it does not know."""
    if hf_name in EMBEDDING_TENSORS:
        return EMBEDDING_TENSORS[hf_name]
    if hf_name.startswith(UNUSED_TENSORS):
        return None
    parts = hf_name.split(".")
    if len(parts) >= 5 and parts[:2] == ["encoder", "layer"] and parts[2].isdigit():
        part = LAYER_TENSORS.get(".".join(parts[3:-1]))
        if part is not None and parts[-1] in ("weight", "bias"):
            return f"blk.{parts[2]}.{part}.{parts[-1]}"
    raise ModelError(f"the model has a weight llama.cpp's BERT has no place for: {hf_name}")


def _as_llama_piece(token: str) -> str:
    if token.startswith("[") and token.endswith("]"):
        return token
    if token.startswith("##"):
        return token[2:]
    return WORD_START + token


def _vocabulary(path: Path, tokenizer: dict[str, Any]) -> tuple[list[str], dict[str, int]]:
    try:
        tokens = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise ModelError(f"cannot read the vocabulary {path}: {exc.strerror or exc}") from None
    ids = {token: i for i, token in enumerate(tokens)}
    special: dict[str, int] = {}
    for kind in SPECIAL_TOKENS:
        text = tokenizer.get(f"{kind}_token", f"[{kind.upper()}]")
        if text not in ids:
            raise ModelError(f"{path} has no {kind} token {text!r}")
        special[kind] = ids[text]
    return tokens, special


def _pooling(path: Path) -> gguf.PoolingType:
    config = _json(path)
    chosen = [key for key, on in config.items() if key.startswith("pooling_mode") and on is True]
    if len(chosen) != 1 or chosen[0] not in POOLING:
        raise ModelError(f"{path}: only mean or CLS pooling, one of them, can be converted")
    return POOLING[chosen[0]]


def _json(path: Path) -> dict[str, Any]:
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ModelError(f"cannot read {path}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise ModelError(f"{path} is not valid JSON: {exc}") from None
    if not isinstance(value, dict):
        raise ModelError(f"{path} is not a JSON object")
    return value
