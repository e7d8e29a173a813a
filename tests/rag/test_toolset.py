"""The built-in `rag_query` tool: what a model is offered for its `rag:` collections, what
a call returns (passages under citations), and how a chat set up from the config gets it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.rag.word_vectors import WordVectors

from farmhand.config import parse_config
from farmhand.errors import ConfigError
from farmhand.rag.library import Library
from farmhand.rag.toolset import RagToolset
from farmhand.service.chat import ChatRequest, chat_tools
from farmhand.service.state import ServiceState

pytestmark = pytest.mark.anyio


@pytest.fixture
def library(tmp_path: Path) -> Iterator[Library]:
    made = Library(tmp_path / "rag", lambda name: WordVectors(name))
    docs, notes = tmp_path / "docs", tmp_path / "notes"
    docs.mkdir()
    notes.mkdir()
    (docs / "barn.md").write_text("# Barn\nThe barn door code is 4471.\n")
    (notes / "field.txt").write_text("The north field grows barley this year.\n")
    made.add("docs", [docs], WordVectors())
    made.add("notes", [notes], WordVectors())
    yield made
    made.close()


async def test_one_collection_one_argument(library: Library) -> None:
    toolset = RagToolset(library, ["docs"])
    (tool,) = await toolset.list_tools()
    assert tool.name == "rag_query" and tool.read_only
    assert tool.parameters["required"] == ["query"]
    assert list(tool.parameters["properties"]) == ["query"]
    assert "docs" in tool.description

    output = await toolset.call_tool("rag_query", {"query": "what is the barn door code?"})
    assert not output.is_error
    first = output.text.split("\n\n")[0]
    assert first.startswith("[1] ") and first.split("\n")[0].endswith("barn.md, lines 1-2")
    assert "4471" in first
    assert output.text.endswith("name the file each fact comes from.")


async def test_several_collections_are_searched_together_or_one_by_name(
    library: Library,
) -> None:
    toolset = RagToolset(library, ["docs", "notes"], top_k=1)
    (tool,) = await toolset.list_tools()
    assert tool.parameters["properties"]["collection"]["enum"] == ["docs", "notes"]
    both = await toolset.call_tool("rag_query", {"query": "which field grows barley"})
    assert "field.txt" in both.text and "barn.md" not in both.text
    one = await toolset.call_tool("rag_query", {"query": "barley", "collection": "docs"})
    assert "field.txt" not in one.text


async def test_bad_calls_are_tool_errors_the_model_can_act_on(library: Library) -> None:
    toolset = RagToolset(library, ["docs"])
    other = await toolset.call_tool("rag_query", {"query": "x", "collection": "notes"})
    assert (other.is_error, other.text) == (True, "no collection 'notes' here; use one of docs")
    empty = await toolset.call_tool("rag_query", {"query": " "})
    assert empty.is_error and "needs a `query`" in empty.text
    long = await toolset.call_tool("rag_query", {"query": "x" * 5000})
    assert long.is_error and "shorten it" in long.text
    gone = await RagToolset(library, ["deleted"]).call_tool("rag_query", {"query": "barn"})
    assert gone.is_error and gone.text.startswith("no collection 'deleted'")


async def test_a_model_with_rag_in_the_config_is_offered_rag_query(tmp_path: Path) -> None:
    config = parse_config(
        "runtime:\n  models:\n"
        "    - {name: reader, provider: openai, model: m, rag: [docs]}\n"
        "    - {name: plain, provider: openai, model: m}\n"
    )
    async with ServiceState.open(config, tmp_path) as state:
        names = [t.name for t in await chat_tools(state, ChatRequest("reader", []))]
        assert names == ["rag_query"]
        assert await chat_tools(state, ChatRequest("plain", [])) == []


def test_collection_names_in_the_config_are_checked() -> None:
    with pytest.raises(ConfigError) as info:
        parse_config("runtime:\n  models:\n    - {name: m, rag: [../secrets]}\n")
    assert "runtime.models[0].rag: '../secrets' is not a collection name" in str(info.value)
