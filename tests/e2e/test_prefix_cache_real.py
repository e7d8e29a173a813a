"""The KV prefix cache with the real embedded model: the head of a prompt (system prompt and
tools) is saved on the first turn, restored in a fresh context, and the turn that follows
processes only the question and answers exactly as without the cache (greedy)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from farmhand.messages import Message, StreamEvent, ToolCallEvent
from farmhand.models.assemble import ensure_model
from farmhand.models.catalog import DEFAULT_MODEL
from farmhand.providers.base import GenerationSettings
from farmhand.providers.llamacpp import LlamaCppProvider
from farmhand.providers.llamacpp.load import load_llama
from farmhand.providers.llamacpp.prefix_cache import PrefixCache
from farmhand.tools.definition import ToolDefinition

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]

TOOLS = [
    ToolDefinition(
        "list_directory",
        "List the files and folders in a directory, one per line, [FILE] or [DIR] first.",
        {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
    ),
    ToolDefinition(
        "read_file",
        "Read a text file and return its contents.",
        {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
    ),
]
GREEDY = GenerationSettings(temperature=0, seed=0, max_tokens=48)


@pytest.fixture(scope="module")
def llama() -> Iterator[Any]:
    model = load_llama(ensure_model(DEFAULT_MODEL))
    yield model
    model.close()


def fresh(llama: Any) -> None:
    """As a new process finds the context: nothing held."""
    llama.reset()
    llama._ctx.kv_cache_seq_rm(-1, 0, -1)


async def turn(provider: LlamaCppProvider, question: str) -> list[StreamEvent]:
    messages = [Message.system("You help with files."), Message.user(question)]
    return [e async for e in provider.stream(messages, TOOLS, GREEDY)]


def calls(events: list[StreamEvent]) -> list[tuple[str, dict[str, Any]]]:
    return [(e.call.name, e.call.arguments) for e in events if isinstance(e, ToolCallEvent)]


async def test_saved_then_restored_in_a_fresh_context(llama: Any, tmp_path: Path) -> None:
    question = "List the files in the examples folder."
    fresh(llama)
    uncached = LlamaCppProvider(llama)
    baseline = await turn(uncached, question)
    full = uncached.processed_prompt_tokens

    fresh(llama)
    first = LlamaCppProvider(llama, prefix_cache=PrefixCache(llama, tmp_path))
    saved = await turn(first, question)
    assert first.last_prefix == "saved"
    assert len(list(tmp_path.glob("*.kv"))) == 1
    assert first.processed_prompt_tokens == full  # the head, then the rest: nothing extra

    fresh(llama)
    second = LlamaCppProvider(llama, prefix_cache=PrefixCache(llama, tmp_path))
    restored = await turn(second, question)
    assert second.last_prefix == "restored"
    assert second.processed_prompt_tokens < full / 4  # only the question and what follows
    assert calls(baseline) == calls(saved) == calls(restored) != []

    # A later round of the same run finds the head already in the context.
    await turn(second, "Read the README.md file.")
    assert second.last_prefix == "held"


async def test_other_tools_or_system_prompt_get_their_own_file(llama: Any, tmp_path: Path) -> None:
    fresh(llama)
    provider = LlamaCppProvider(llama, prefix_cache=PrefixCache(llama, tmp_path))
    await turn(provider, "What is in notes.txt?")
    fewer = LlamaCppProvider(llama, prefix_cache=PrefixCache(llama, tmp_path))
    messages = [Message.system("You help with files."), Message.user("What is in notes.txt?")]
    [e async for e in fewer.stream(messages, TOOLS[:1], GREEDY)]
    assert fewer.last_prefix == "saved"
    assert len(list(tmp_path.glob("*.kv"))) == 2


async def test_a_damaged_file_is_dropped_and_the_prompt_processed(
    llama: Any, tmp_path: Path
) -> None:
    fresh(llama)
    provider = LlamaCppProvider(llama, prefix_cache=PrefixCache(llama, tmp_path))
    expected = calls(await turn(provider, "List the files in docs."))
    (saved,) = tmp_path.glob("*.kv")
    saved.write_bytes(b"not a llama.cpp state file")
    fresh(llama)
    again = LlamaCppProvider(llama, prefix_cache=PrefixCache(llama, tmp_path))
    assert calls(await turn(again, "List the files in docs.")) == expected
    assert again.last_prefix == "saved"  # the bad file was replaced by a good one
    assert saved.stat().st_size > 1000


async def test_a_batched_context_is_seeded_from_disk_after_a_restart(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`farmhand serve` with n_parallel: the head a sequence computed is saved once it is
    done, and the next process restores it into a free slot before its first turn."""
    monkeypatch.setenv("FARMHAND_HOME", str(tmp_path))
    question = "List the files in the examples folder."
    outcomes = []
    for _ in range(2):  # two processes, as it were: each loads the model afresh
        provider = LlamaCppProvider(
            load_llama(ensure_model(DEFAULT_MODEL)), n_parallel=2, prefix_cache=True
        )
        try:
            events = await turn(provider, question)
            outcomes.append((provider.last_prefix, provider.processed_prompt_tokens, events))
        finally:
            provider.engine.close()
            assert provider.engine.join(60)
        assert len(list(tmp_path.rglob("*.kv"))) == 1
    (first, full, computed), (second, processed, restored) = outcomes
    assert (first, second) == ("saved", "restored")
    assert processed < full / 4  # only the question and what follows
    assert calls(computed) == calls(restored) != []
