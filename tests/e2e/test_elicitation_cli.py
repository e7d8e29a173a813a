"""`farmhand chat` and `farmhand run` answer what MCP servers ask, at a real terminal.

The real command, a scripted model (an OpenAI-compatible backend that plays canned turns),
real servers: server-everything's own elicitation tool, and the asking test server behind
`require_approval`. The answers are typed on a pseudo-terminal as a person would type them.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from tests.support.asking import ASKING
from tests.support.real_servers import everything_bin
from tests.support.scripted_backend import ScriptedBackend, answer_with_result, call, model_config
from tests.support.terminal import Terminal

pytestmark = pytest.mark.e2e

Farmhand = Callable[..., subprocess.CompletedProcess[str]]
ELICIT = "everything:trigger-elicitation-request"


def write_config(folder: Path, backend: ScriptedBackend, *servers: dict[str, Any]) -> Path:
    config = {"mcp": {"servers": list(servers)}, "runtime": {"models": [model_config(backend.url)]}}
    path = folder / "farmhand.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def quiet_env(folder: Path) -> dict[str, str]:
    return {"XDG_CONFIG_HOME": str(folder / "config"), "FARMHAND_MCP_SERVERS": ""}


EVERYTHING = {"name": "everything", "command": "", "args": ["stdio"]}


def everything() -> dict[str, Any]:
    return {**EVERYTHING, "command": everything_bin()}


def test_chat_asks_server_everythings_form_at_the_terminal(tmp_path: Path) -> None:
    with ScriptedBackend([call(ELICIT, {}), answer_with_result()]) as backend:
        write_config(tmp_path, backend, everything())
        with Terminal("chat", "Fill in my details", cwd=tmp_path, env=quiet_env(tmp_path)) as term:
            term.expect("everything (trigger-elicitation-request) asks:")
            term.expect("Please provide inputs for the following fields:")
            term.expect("String (required) – Your full, legal name: ")
            term.type("")  # required: asked again
            term.expect("this field is required")
            term.expect("Your full, legal name: ")
            term.type("Ada Lovelace")
            term.expect("Agree to the terms and conditions [y/n]: ")
            term.type("y")
            term.expect('(Enter: "It was a dark and stormy night.")')
            term.type("")
            term.expect("Your email address")
            term.type("not an email")
            term.expect("is not a 'email'")
            term.type("ada@example.com")
            term.expect("Portfolio / personal website [uri]: ")
            term.type("")
            term.expect("Your date of birth [date]: ")
            term.type("")
            term.expect("[integer] (Enter: 42): ")
            term.type("500")
            term.expect("500 is greater than the maximum of 100")
            term.type("7")
            term.expect("(Enter: 3.14): ")
            term.type("")
            term.expect("[1) Monica, 2) Rachel, 3) Joey")
            term.type("2")
            term.expect("[1) Guitar, 2) Piano, 3) Violin")
            term.type("1, 3")
            term.expect("1) Superman, 2) Green Lantern, 3) Wonder Woman")
            term.type("Wonder Woman")
            term.expect("1) Tuna, 2) Salmon, 3) Trout")
            term.type("")
            term.expect("1) Cats, 2) Dogs")
            term.type("2")
            code, stdout = term.finish()
    assert code == 0, term.screen
    assert "The tool said: ✅ User provided the requested information!" in stdout
    for line in ("- Name: Ada Lovelace", "- Agreed to terms: true", "- Email: ada@example.com"):
        assert line in stdout
    assert "- Favorite Integer: 7" in stdout and "- Favorite Number: 3.14" in stdout
    for value in ('"Rachel"', '"Guitar"', '"Violin"', '"hero-3"', '"fish-1"', '"pet-2"'):
        assert value in stdout, value
    assert "Traceback" not in term.screen


def test_chat_declines_a_form_at_the_users_word(tmp_path: Path) -> None:
    with ScriptedBackend([call(ELICIT, {}), answer_with_result()]) as backend:
        write_config(tmp_path, backend, everything())
        with Terminal("chat", "Fill it in", cwd=tmp_path, env=quiet_env(tmp_path)) as term:
            term.expect("Your full, legal name: ")
            term.type("/decline")
            code, stdout = term.finish()
    assert code == 0, term.screen
    assert "The tool said: ❌ User declined to provide the requested information." in stdout


def test_chat_with_piped_stdin_declines_and_says_why(
    tmp_path: Path, farmhand_cli: Farmhand
) -> None:
    with ScriptedBackend([call(ELICIT, {}), answer_with_result()]) as backend:
        write_config(tmp_path, backend, everything())
        run = farmhand_cli("chat", "Fill it in", cwd=tmp_path, env=quiet_env(tmp_path), input="")
    assert run.returncode == 0, run.stderr
    assert "everything (trigger-elicitation-request) asks:" in run.stderr
    assert "declined: stdin is not a terminal, so no one can answer" in run.stderr
    assert "User declined to provide the requested information" in run.stdout


def test_run_asks_approval_for_a_destructive_tool_at_the_terminal(tmp_path: Path) -> None:
    asking = {
        "name": "asking",
        "command": sys.executable,
        "args": [ASKING],
        "require_approval": "destructive",
    }
    turns = [
        call("asking:wipe", {"target": "/srv/old"}),
        answer_with_result(),
        call("asking:wipe", {"target": "/srv/new"}),
        answer_with_result(),
    ]
    with ScriptedBackend(turns) as backend:
        write_config(tmp_path, backend, asking)
        # run's own prompt (›) goes to stdout, a pipe here: only the questions show.
        with Terminal("run", cwd=tmp_path, env=quiet_env(tmp_path)) as term:
            term.type("Clean up the old folder")
            term.expect('Run asking:wipe with {"target": "/srv/old"}?')
            term.expect("Allow it? [y/N] ")
            term.type("y")
            term.type("And the new one")
            term.expect('Run asking:wipe with {"target": "/srv/new"}?')
            term.expect("Allow it? [y/N] ")
            term.type("")  # Enter: no
            term.type("/exit")
            code, stdout = term.finish()
    assert code == 0, term.screen
    assert "The tool said: wiped /srv/old" in stdout
    assert "The tool said: asking:wipe was not run: the user declined it." in stdout
    assert "wiped /srv/new" not in stdout
