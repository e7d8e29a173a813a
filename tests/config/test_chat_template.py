"""A model's `chat_template:` in the config: inline text or a file, a missing file a config
error at its line, a client's config held to files in the allowed folders; and
`--chat-template-file`'s helpers."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from farmhand.config.chat_template import chat_template_text
from farmhand.config.loader import OutsideRules, load_config, parse_config
from farmhand.config.models import FarmhandConfig, ModelConfig, default_config
from farmhand.config.template_files import serve_with_template_file, with_template_file
from farmhand.errors import ConfigError

TEMPLATE = "{% for m in messages %}{{ m.content }}{% endfor %}"


def _config(folder: Path, entry: str) -> Path:
    """A config whose one model, `local`, has the keys in `entry` (YAML lines) too."""
    path = folder / "farmhand.yaml"
    keys = textwrap.indent(entry, "      ")
    path.write_text(f"runtime:\n  models:\n    - name: local\n{keys}\n", encoding="utf-8")
    return path


def test_inline_text_is_the_template(tmp_path: Path) -> None:
    config = load_config(_config(tmp_path, f"chat_template: '{TEMPLATE}'"))
    assert config.model("local").chat_template == TEMPLATE
    assert chat_template_text(config.model("local").chat_template) == TEMPLATE


def test_a_path_is_a_file_relative_to_the_config(tmp_path: Path) -> None:
    (tmp_path / "templates").mkdir()
    (tmp_path / "templates" / "tools.jinja").write_text(TEMPLATE, encoding="utf-8")
    for value in ("templates/tools.jinja", "file://templates/tools.jinja"):
        config = load_config(_config(tmp_path, f"chat_template: {value}"))
        stored = config.model("local").chat_template
        assert stored == str(tmp_path / "templates" / "tools.jinja")
        assert chat_template_text(stored) == TEMPLATE


def test_a_missing_file_is_a_config_error_at_its_line(tmp_path: Path) -> None:
    path = _config(tmp_path, "chat_template: templates/custom.jinja")
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    message = str(caught.value)
    assert message.startswith(f"{path}:4: runtime.models[0].chat_template:")
    assert f"chat template file {tmp_path / 'templates' / 'custom.jinja'} does not exist" in (
        message
    )
    assert "write the template inline" in message


def test_a_file_without_jinja_is_refused(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("just words", encoding="utf-8")
    with pytest.raises(ConfigError, match="holds no Jinja"):
        load_config(_config(tmp_path, "chat_template: notes.txt"))


def test_only_the_embedded_model_takes_a_template(tmp_path: Path) -> None:
    entry = f"provider: openai\nmodel: gpt-4o\nchat_template: '{TEMPLATE}'"
    with pytest.raises(ConfigError, match="chat_template is only for provider llamacpp"):
        load_config(_config(tmp_path, entry))


def test_a_clients_config_names_files_in_the_allowed_folders_only(tmp_path: Path) -> None:
    allowed = tmp_path / "allowed"
    allowed.mkdir()
    (allowed / "ok.jinja").write_text(TEMPLATE, encoding="utf-8")
    outside = OutsideRules(allowed_dirs=(allowed.resolve(),))

    def client(value: str) -> FarmhandConfig:
        text = f"runtime:\n  models:\n    - name: p\n      chat_template: '{value}'\n"
        return parse_config(text, "project", base_dir=tmp_path, outside=outside)

    assert client(str(allowed / "ok.jinja")).model("p").chat_template == str(allowed / "ok.jinja")
    with pytest.raises(ConfigError, match="may not carry a chat template's text"):
        client(TEMPLATE)
    secret = tmp_path / "operator.jinja"
    secret.write_text(TEMPLATE, encoding="utf-8")
    for value in (str(secret), "allowed/../operator.jinja", str(tmp_path / "none.jinja")):
        # The same answer whether the file exists or not.
        with pytest.raises(ConfigError, match="only name files inside the folders"):
            client(value)


def test_the_flag_replaces_the_embedded_models_template(tmp_path: Path) -> None:
    file = tmp_path / "custom.jinja"
    file.write_text(TEMPLATE, encoding="utf-8")
    model = with_template_file(ModelConfig(name="m"), file)
    assert model.chat_template == TEMPLATE
    with pytest.raises(ConfigError, match="does not exist"):
        with_template_file(ModelConfig(name="m"), tmp_path / "missing.jinja")
    remote = ModelConfig(name="r", provider="openai", model="gpt-4o")
    with pytest.raises(ConfigError, match="applies to the embedded model"):
        with_template_file(remote, file)


def test_serve_gives_the_template_to_the_default_model(tmp_path: Path) -> None:
    file = tmp_path / "custom.jinja"
    file.write_text(TEMPLATE, encoding="utf-8")
    served = serve_with_template_file(default_config(), file)
    assert served.model().chat_template == TEMPLATE
    two = FarmhandConfig.model_validate(
        {"runtime": {"models": [{"name": "a"}, {"name": "b", "default": True}]}}
    )
    served = serve_with_template_file(two, file)
    assert served.model("b").chat_template == TEMPLATE
    assert served.model("a").chat_template is None
    empty = serve_with_template_file(FarmhandConfig(), file)  # no models: the built-in one
    assert empty.model().chat_template == TEMPLATE
