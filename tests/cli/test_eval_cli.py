"""`farmhand eval` as a command: targets side by side, --json for CI, --fail-under, errors.

The provider is the scripted one (`provider_for` replaced): these tests are about the
command, not a model; tests/e2e/test_eval_real_model.py runs the real one.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.eval.scripted_model import perfect_model
from typer.testing import CliRunner

from farmhand.cli import eval as eval_cli
from farmhand.cli.main import app
from farmhand.config.models import FarmhandConfig, ModelConfig
from farmhand.errors import ConfigError
from farmhand.eval.suite import BUILTIN, load_suite
from farmhand.eval.targets import parse_target
from farmhand.providers.base import Provider
from farmhand.providers.scripted import ScriptedProvider, Step

SUITE = load_suite(BUILTIN).select(["single", "no_call"], limit=2)


@pytest.fixture
def built(monkeypatch: pytest.MonkeyPatch) -> list[ModelConfig]:
    """Every model the command builds; a target labelled `bad` answers everything in text."""
    models: list[ModelConfig] = []

    def build(model: ModelConfig, **_: object) -> Provider:
        models.append(model)
        if model.description == "bad":
            return ScriptedProvider([Step.text("no idea")] * len(SUITE.cases))
        return perfect_model(SUITE)

    monkeypatch.setattr(eval_cli, "provider_for", build)
    return models


@pytest.fixture(autouse=True)
def no_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # no ./farmhand.yaml: the built-in defaults


def invoke(*args: str) -> tuple[int, str]:
    chosen = ["--category", "single", "--category", "no_call", "--limit", "2"]
    result = CliRunner().invoke(app, ["eval", *args, *chosen])
    return result.exit_code, result.output


def test_json_output_for_two_targets(built: list[ModelConfig]) -> None:
    code, out = invoke("--json", "-t", "default", "-t", "default,description=bad,label=worse")
    assert code == 0, out
    report = json.loads(out)
    assert report["suite"] == "builtin"
    assert [t["target"] for t in report["targets"]] == ["default", "worse"]
    assert report["targets"][0]["mean_accuracy"] == 1.0
    assert report["targets"][1]["categories"]["single"]["passed"] == 0
    assert report["targets"][1]["categories"]["no_call"]["passed"] == 2
    assert len(report["targets"][0]["items"]) == len(SUITE.cases)
    assert [m.provider for m in built] == ["llamacpp", "llamacpp"]


def test_table_and_details(built: list[ModelConfig]) -> None:
    code, out = invoke("-t", "default,description=bad,label=worse", "--details")
    assert code == 0, out
    assert "farmhand eval: builtin" in out
    assert "mean of categories" in out
    assert "failures of worse" in out
    assert "single-weather" in out


def test_fail_under_exits_1_naming_the_target(built: list[ModelConfig]) -> None:
    code, out = invoke("-t", "default,description=bad,label=worse", "--fail-under", "0.9")
    assert code == 1
    assert "below 90%" in out
    assert "worse" in out


def test_bad_target_is_one_line_error(built: list[ModelConfig]) -> None:
    code, out = invoke("-t", "default,strategy=telepathy")
    assert code == 1
    assert "unknown strategy 'telepathy'" in out
    assert built == []


def test_parse_target_strategies_sampling_and_fields() -> None:
    config = FarmhandConfig()
    target = parse_target(
        "default,strategy=prompt_based+constrained+jit,temperature=0.3,seed=5,n_ctx=8192", config
    )
    assert target.model.tool_call_strategy == "prompt_based"
    assert target.model.constrained
    assert target.model.n_ctx == 8192
    assert (target.options.jit, target.options.temperature, target.options.seed) == (True, 0.3, 5)
    assert "prompt_based" in target.describe() and "jit" in target.describe()
    catalog = parse_target("qwen2.5-coder:1.5b,label=big", config)
    assert (catalog.label, catalog.model.model) == ("big", "qwen2.5-coder:1.5b")
    gguf = parse_target("/models/x.gguf", config)
    assert gguf.model.model_path == "/models/x.gguf"


@pytest.mark.parametrize(
    ("spec", "needle"),
    [
        ("nosuch", "not a model of the config"),
        ("default,n_ctx=-5", "n_ctx"),
        ("default,colour=blue", "colour"),
        ("default,oops", "not key=value"),
    ],
)
def test_parse_target_errors(spec: str, needle: str) -> None:
    with pytest.raises(ConfigError, match=needle):
        parse_target(spec, FarmhandConfig())


def test_html_writes_the_page_and_keeps_a_copy_under_farmhand_home(
    built: list[ModelConfig], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FARMHAND_HOME", str(tmp_path / "home"))
    code, out = invoke(
        "-t", "default", "-t", "default,description=bad,label=worse", "--html", "r.html"
    )
    assert code == 0, out
    page = (tmp_path / "r.html").read_text()
    assert page.startswith("<!doctype html>") and "<figcaption>single</figcaption>" in page
    [kept] = (tmp_path / "home" / "eval").iterdir()
    assert kept.name.endswith("-builtin.html") and kept.read_text() == page
    assert "farmhand eval: builtin" in out  # the table is printed as before


def test_html_into_a_missing_folder_fails_before_the_run(built: list[ModelConfig]) -> None:
    code, out = invoke("--html", "no/such/folder/r.html")
    assert code == 1 and "the folder no/such/folder does not exist" in out
    assert built == []  # no model was loaded
