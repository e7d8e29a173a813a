"""The Python API with the real embedded model and no config file, as the package's
docstring shows it: `async with farmhand.Runtime() as rt`, a folder and a Python function
as tools."""

from __future__ import annotations

from pathlib import Path

import pytest

import farmhand

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]

FILES = ["invoice-march.pdf", "garden-plan.txt", "recipes.md"]
REPEATABLE = {"temperature": 0.0, "seed": 7, "max_tool_rounds": 2}


def shipping_days(country: str) -> int:
    """How many days a parcel takes to reach a country, given its ISO code (e.g. NO)."""
    return {"NO": 2, "CL": 9}.get(country.upper(), 5)


async def test_the_embedded_model_reads_a_folder_and_calls_a_function(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))  # no user definitions
    monkeypatch.delenv("FARMHAND_MCP_SERVERS", raising=False)
    folder = tmp_path / "papers"
    folder.mkdir()
    for name in FILES:
        (folder / name).write_text(f"contents of {name}\n")
    monkeypatch.chdir(tmp_path)
    async with farmhand.Runtime() as rt:
        listed = await rt.chat(
            "List the files in the papers folder.", tools=["papers"], **REPEATABLE
        )
        shipped = await rt.chat(
            "How many days does a parcel take to reach Norway (NO)?",
            tools=[shipping_days],
            **REPEATABLE,
        )
    called = [record.call.name for record in listed.tool_calls]
    assert any(name.startswith("filesystem:") for name in called), called
    results = " ".join(r.result.content for r in listed.tool_calls)
    assert all(name in results for name in FILES), results
    assert listed.usage.completion_tokens > 0
    runs = [r for r in shipped.tool_calls if r.call.name == "shipping_days"]
    assert runs, [r.call.name for r in shipped.tool_calls]
    # The function ran with the model's arguments, and the model was handed its answer.
    assert runs[0].result.content == str(shipping_days(**runs[0].call.arguments))
    assert shipped.text.strip(), shipped
