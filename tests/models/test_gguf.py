"""The GGUF header reader against files written to the format's layout."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.support.gguf_files import TEMPLATE, tiny_model, write_gguf

from farmhand.errors import ModelError
from farmhand.models.gguf import parameter_size, read_gguf


def test_reads_typed_metadata_and_counts_parameters(tmp_path: Path) -> None:
    info = read_gguf(tiny_model(tmp_path / "tiny.gguf"))
    assert info.version == 3
    assert info.architecture == "qwen3"
    assert info.context_length == 40960
    assert info.quantization == "Q4_K_M"
    assert info.chat_template == TEMPLATE
    assert info.metadata["tokenizer.ggml.add_bos_token"] is False
    assert info.metadata["qwen3.rope.freq_base"] == 1000000.0
    assert info.parameter_count == 1_000_000 + 234_567
    assert info.parameter_size == "1.23M"


def test_long_arrays_are_skipped_unless_asked_for(tmp_path: Path) -> None:
    path = tiny_model(tmp_path / "tiny.gguf")
    info = read_gguf(path)
    assert info.metadata["tokenizer.ggml.tokens"] is None
    assert info.array_lengths["tokenizer.ggml.tokens"] == 100
    assert info.metadata["general.name"] == "Tiny Test"  # read on after the skipped array
    full = read_gguf(path, keep_arrays=1000)
    assert full.metadata["tokenizer.ggml.tokens"][:3] == ["t0", "t1", "t2"]


def test_short_arrays_are_kept(tmp_path: Path) -> None:
    info = read_gguf(write_gguf(tmp_path / "a.gguf", {"x.stops": [1, 2, 3], "x.ok": True}))
    assert info.metadata == {"x.stops": [1, 2, 3], "x.ok": True}
    assert info.quantization == "" and info.parameter_count == 0


@pytest.mark.parametrize(
    ("data", "says"),
    [
        (b"", "does not start with GGUF"),
        (b"GGML\x03\x00\x00\x00", "does not start with GGUF"),
        (b"GGUF\x03\x00\x00\x00\x00", "ends inside its header"),
        (b"GGUF\x01\x00\x00\x00", "version 1 is too old"),
    ],
)
def test_what_is_not_a_gguf_is_a_model_error(tmp_path: Path, data: bytes, says: str) -> None:
    path = tmp_path / "bad.gguf"
    path.write_bytes(data)
    with pytest.raises(ModelError, match=says):
        read_gguf(path)


def test_a_cut_file_is_a_model_error(tmp_path: Path) -> None:
    path = tiny_model(tmp_path / "tiny.gguf")
    path.write_bytes(path.read_bytes()[:200])
    with pytest.raises(ModelError, match="not a valid GGUF file"):
        read_gguf(path)


def test_a_missing_file_is_a_model_error(tmp_path: Path) -> None:
    with pytest.raises(ModelError, match="cannot read"):
        read_gguf(tmp_path / "none.gguf")


def test_parameter_sizes_read_like_ollamas() -> None:
    assert parameter_size(494_032_768) == "494.03M"
    assert parameter_size(1_543_714_304) == "1.54B"
    assert parameter_size(0) == ""
