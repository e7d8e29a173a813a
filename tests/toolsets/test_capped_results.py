"""Result capping: head and tail kept, a marker saying how much was cut and where it is."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from farmhand.tools.definition import ToolDefinition
from farmhand.toolsets.base import ToolOutput
from farmhand.toolsets.saved_results import ResultArchive, Saved
from farmhand.toolsets.wrappers import CappedResults, cut_middle

pytestmark = pytest.mark.anyio


class Echo:
    async def list_tools(self) -> list[ToolDefinition]:
        return [ToolDefinition("echo")]

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> ToolOutput:
        return ToolOutput(
            arguments["text"],
            is_error=bool(arguments.get("error")),
            offers_tools=bool(arguments.get("offers")),
        )


async def test_short_results_pass_through_untouched(tmp_path: Path) -> None:
    capped = CappedResults(Echo(), max_chars=100, archive=ResultArchive(lambda: tmp_path))
    assert await capped.call_tool("echo", {"text": "short"}) == ToolOutput("short")
    assert list(tmp_path.iterdir()) == []


async def test_long_results_keep_head_and_tail_and_are_saved_in_full(tmp_path: Path) -> None:
    text = "HEAD" + "x" * 5000 + "TAIL"
    archive = ResultArchive(lambda: tmp_path / "results")
    capped = CappedResults(Echo(), max_chars=400, archive=archive)
    output = await capped.call_tool("echo", {"text": text, "error": True})
    [saved] = (tmp_path / "results").iterdir()
    assert saved.read_text() == text
    assert output.is_error  # an error stays an error
    assert not output.offers_tools
    offering = await capped.call_tool("echo", {"text": text, "offers": True})
    assert offering.offers_tools  # a discovery's menu stays one when cut (the loop reads it)
    assert output.full_text == text
    assert len(output.text) <= 400
    assert output.text.startswith("HEAD") and output.text.endswith("TAIL")
    cut = len(text) - len(output.text.split("\n\n[")[0]) - len(output.text.split("]\n\n")[1])
    assert f"[... {cut} of {len(text)} characters cut here; the full text is in {saved}" in (
        output.text
    )


def test_the_marker_says_when_the_text_could_not_be_saved() -> None:
    where = Saved(None, "disk full").where()
    assert "could not be saved: disk full" in cut_middle("y" * 1000, 300, where)
