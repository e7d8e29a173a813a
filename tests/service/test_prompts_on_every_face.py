"""The config's `prompts:` reach the model the same way whichever face set the chat up (one
builder, `runtime.session.chat_setup`): `farmhand serve`'s app on a real uvicorn asked by
the OpenAI client, and the real `farmhand chat` command. Both talk to one scripted
OpenAI-compatible backend, which notes what the model was sent."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml
from openai import OpenAI
from tests.support.live import LiveServer
from tests.support.scripted_backend import ScriptedBackend, model_config, say

from farmhand.assembly import create_app
from farmhand.config.loader import load_config

Farmhand = Callable[..., subprocess.CompletedProcess[str]]

RULES = "You are the barn's assistant. Answer in one line."
OWN = "Speak like a farmer."


def write_config(folder: Path, backend_url: str) -> Path:
    model = {**model_config(backend_url), "prompts": ["barn"]}
    config = {
        "version": "v1",
        "prompts": [{"name": "barn", "messages": [{"role": "system", "content": RULES}]}],
        "runtime": {"models": [model]},
    }
    path = folder / "farmhand.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


def system_texts(request: dict[str, Any]) -> list[str]:
    return [m["content"] for m in request["messages"] if m["role"] == "system"]


def test_prompts_reach_the_model_from_http_and_from_the_cli_alike(
    tmp_path: Path, farmhand_cli: Farmhand
) -> None:
    with ScriptedBackend([say("ok")] * 4) as backend:
        path = write_config(tmp_path, backend.url)
        run = farmhand_cli("chat", "hi", "--config", str(path), cwd=tmp_path)
        assert run.returncode == 0, run.stderr
        with LiveServer(create_app(load_config(path), home=tmp_path, api_keys=[])) as server:
            client = OpenAI(base_url=f"{server.url}/v1", api_key="unused")
            asked = [
                [{"role": "user", "content": "hi"}],
                [{"role": "system", "content": OWN}, {"role": "user", "content": "hi"}],
                # A conversation sent back whole already opens with the prompts: once only.
                [{"role": "system", "content": RULES}, {"role": "user", "content": "hi"}],
            ]
            for messages in asked:
                answer = client.chat.completions.create(model="scripted", messages=messages)  # type: ignore[arg-type]
                assert answer.choices[0].message.content == "ok"
    cli, http, http_own, http_again = backend.requests
    assert system_texts(cli) == [RULES]
    assert http["messages"] == cli["messages"]  # the same conversation from either face
    assert system_texts(http_own) == [f"{RULES}\n\n{OWN}"]
    assert http_again["messages"] == cli["messages"]


def test_farmhand_run_opens_its_conversation_with_the_prompts_once(
    tmp_path: Path, farmhand_cli: Farmhand
) -> None:
    with ScriptedBackend([say("Hello."), say("Still here.")]) as backend:
        path = write_config(tmp_path, backend.url)
        lines = "hi\n/tools\nand now?\n"
        run = farmhand_cli("run", "--config", str(path), cwd=tmp_path, input=lines)
    assert run.returncode == 0, run.stderr
    assert "Hello." in run.stdout and "Still here." in run.stdout
    first, second = backend.requests
    assert system_texts(first) == system_texts(second) == [RULES]
    # The second turn continues the first: its question, its answer, then the new one.
    said = [(m["role"], m["content"]) for m in second["messages"]]
    assert said == [
        ("system", RULES),
        ("user", "hi"),
        ("assistant", "Hello."),
        ("user", "and now?"),
    ]
