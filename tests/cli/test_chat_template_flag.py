"""`--chat-template-file` on chat, run and serve: a bad file or a model farmhand does not
render for is one line and a non-zero exit, before any model loads."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.cli.test_chat_errors import Farmhand, assert_one_line_failure

COMMANDS = {"chat": ["chat", "hi"], "run": ["run"], "serve": ["serve", "--port", "0"]}


@pytest.mark.parametrize("command", COMMANDS)
def test_a_missing_template_file(tmp_path: Path, farmhand_cli: Farmhand, command: str) -> None:
    run = farmhand_cli(
        *COMMANDS[command], "--chat-template-file", "templates/custom.jinja", cwd=tmp_path
    )
    assert_one_line_failure(run, "chat template file", "custom.jinja", "does not exist")


@pytest.mark.parametrize("command", COMMANDS)
def test_a_model_that_renders_its_own_template(
    tmp_path: Path, farmhand_cli: Farmhand, command: str
) -> None:
    (tmp_path / "farmhand.yaml").write_text(
        "runtime:\n  models:\n    - {name: remote, provider: openai, model: gpt-4o}\n"
    )
    (tmp_path / "custom.jinja").write_text("{{ messages[0].content }}")
    run = farmhand_cli(*COMMANDS[command], "--chat-template-file", "custom.jinja", cwd=tmp_path)
    assert_one_line_failure(run, "--chat-template-file applies to the embedded model", "remote")
