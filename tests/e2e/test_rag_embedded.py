"""RAG for real: `farmhand rag add` embeds a folder of documents (the default embedder),
`rag query` finds the passage, and a model whose config lists the collection (`rag:`)
answers a question from it with the built-in rag_query tool, naming the file."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e

Farmhand = Callable[..., subprocess.CompletedProcess[str]]

DOCUMENTS = {
    "barn.md": "# The barn\n\nThe barn door code is 4471. Change it every spring.\n",
    "orchard.txt": "The orchard has forty apple trees and six pear trees.\n",
    "tractor-manual.md": "# Tractor\n\nCheck the tractor oil level before each use.\n",
}
CONFIG = """
runtime:
  max_tool_rounds: 2
  models:
    - name: reader
      rag: [farm]
      max_tokens: 80
prompts:
  - name: default
    messages:
      - role: system
        content: >-
          Answer from the documents rag_query finds, in one sentence that ends with
          (source: FILE), naming the file the answer comes from.
"""
REPEATABLE = ("--temperature", "0", "--seed", "7")


def test_a_folder_of_documents_answers_a_question_with_its_source(
    tmp_path: Path, farmhand_cli: Farmhand
) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    for name, text in DOCUMENTS.items():
        (docs / name).write_text(text)
    (tmp_path / "farmhand.yaml").write_text(CONFIG)
    env = {"FARMHAND_RAG_DIR": str(tmp_path / "rag")}

    # The default embedder (all-MiniLM-L6-v2) indexes; the chat's rag_query embeds its
    # question with it too, through the service's embedding contexts.
    added = farmhand_cli("rag", "add", "docs", "--collection", "farm", cwd=tmp_path, env=env)
    assert added.returncode == 0, added.stderr
    assert added.stdout.startswith("farm: 3 added (3 passages), 0 unchanged, 0 skipped")
    assert "(embeddings: all-minilm-l6-v2)" in added.stdout

    found = farmhand_cli(
        "rag", "query", "which code opens the barn door?", "-n", "farm", "--json", cwd=tmp_path,
        env=env,
    )  # fmt: skip
    assert found.returncode == 0, found.stderr
    best = json.loads(found.stdout)["results"][0]
    assert (best["source"], best["start_line"]) == ("docs/barn.md", 1)

    asked = farmhand_cli(
        "chat", "-m", "reader", "--json", "--log-level", "debug", *REPEATABLE,
        "What is the barn door code? Say which file says so.", cwd=tmp_path, env=env,
        timeout=1200,
    )  # fmt: skip
    assert asked.returncode == 0, asked.stderr
    report = json.loads(asked.stdout)
    call = report["tool_calls"][0]
    assert call["name"] == "rag_query" and not call["is_error"], call
    assert call["result"].startswith("[1] docs/barn.md, lines 1-3")
    assert "4471" in report["answer"], report["answer"]
    assert "barn.md" in report["answer"], report["answer"]
    assert "tool call rag_query: ok in" in asked.stderr
