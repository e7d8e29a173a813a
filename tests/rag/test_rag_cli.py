"""`farmhand rag add` and `rag query` end to end with the default embedder: the real
command, all-MiniLM-L6-v2 converted from its package into a fresh farmhand home and run by
llama.cpp, the collection a real SQLite file. A collection indexed with another model is
refused, saying how to re-index it, and `--reindex` does."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from tests.rag.word_vectors import WordVectors

from farmhand.rag.library import Library

Farmhand = Callable[..., subprocess.CompletedProcess[str]]

DOCUMENTS = {
    "barn.md": "# The barn\n\nThe barn door code is 4471. Change it every spring.\n",
    "orchard.txt": "The orchard has forty apple trees and six pear trees.\n",
    "tractor-manual.md": "# Tractor\n\nCheck the tractor oil level before each use.\n",
}


@pytest.fixture
def farm(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    docs.mkdir()
    for name, text in DOCUMENTS.items():
        (docs / name).write_text(text)
    return tmp_path


def environment(farm: Path) -> dict[str, str]:
    return {"FARMHAND_HOME": str(farm / "home"), "FARMHAND_RAG_DIR": str(farm / "rag")}


def best(farmhand_cli: Farmhand, farm: Path, question: str, mode: str) -> dict[str, object]:
    found = farmhand_cli(
        "rag", "query", question, "-n", "farm", "--mode", mode, "--json", cwd=farm,
        env=environment(farm),
    )  # fmt: skip
    assert found.returncode == 0, found.stderr
    results = json.loads(found.stdout)["results"]
    assert isinstance(results[0], dict)
    return results[0]


def test_add_and_query_with_the_default_embedder(farmhand_cli: Farmhand, farm: Path) -> None:
    added = farmhand_cli("rag", "add", "docs", "-n", "farm", cwd=farm, env=environment(farm))
    assert added.returncode == 0, added.stderr
    assert added.stdout.startswith("farm: 3 added (3 passages), 0 unchanged, 0 skipped")
    assert "(embeddings: all-minilm-l6-v2)" in added.stdout
    assert (farm / "home" / "models" / "all-minilm-l6-v2-f32.gguf").is_file()

    # Meaning alone finds it: none of the question's words but "door" is in the answer.
    found = best(farmhand_cli, farm, "which number unlocks the entrance of the barn?", "vector")
    assert (found["source"], found["start_line"]) == ("docs/barn.md", 1)
    found = best(farmhand_cli, farm, "how many fruit trees grow here?", "hybrid")
    assert found["source"] == "docs/orchard.txt"

    listed = farmhand_cli("rag", "list", cwd=farm, env=environment(farm))
    assert "farm: 3 documents, 3 passages (embeddings: all-minilm-l6-v2, 384 dimensions)" in (
        listed.stdout
    )


def test_a_collection_of_another_model_is_refused_until_reindexed(
    farmhand_cli: Farmhand, farm: Path
) -> None:
    older = Library(farm / "rag", lambda name: WordVectors(name))
    try:
        older.add("farm", [farm / "docs" / "barn.md"], WordVectors("qwen2.5-coder:1.5b"))
    finally:
        older.close()

    refused = farmhand_cli("rag", "add", "docs", "-n", "farm", cwd=farm, env=environment(farm))
    assert refused.returncode == 1
    assert "collection 'farm' was indexed with the embeddings of 'qwen2.5-coder:1.5b'" in (
        " ".join(refused.stderr.split())
    )
    assert "--reindex" in refused.stderr and "Traceback" not in refused.stderr

    reindexed = farmhand_cli(
        "rag", "add", "docs", "-n", "farm", "--reindex", cwd=farm, env=environment(farm)
    )
    assert reindexed.returncode == 0, reindexed.stderr
    assert reindexed.stdout.startswith("farm: 1 embedded again, 2 added (2 passages), 1 unchanged")
    found = best(farmhand_cli, farm, "which number unlocks the entrance of the barn?", "vector")
    assert str(found["path"]).endswith("barn.md")  # indexed before, from another folder
