"""A model's `chat_template:` override: inline Jinja text, or the path of a file holding it.

One field takes both, as llama-server's `--chat-template` / `--chat-template-file` do between
them: a value with `{{` or `{%` in it is the template itself (no chat template lacks both,
and no sensible file name has either); anything else is a file, `file://` optional, relative
to the config file. The file must exist when the config loads, so a typo is a config error
at its line rather than a model that silently keeps its own template.

A config a client wrote (a project through the API) may only name a file inside the
operator's allowed folders, and may not carry template text: a template is code the server
runs on every turn, so its text never comes over HTTP.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from farmhand.errors import ConfigError

INLINE_MARKS = ("{{", "{%")
FILE_SCHEME = "file://"
MAX_TEMPLATE_BYTES = 1024 * 1024
"""Largest template file read (real ones are under 40 KB)."""


def is_inline(value: str) -> bool:
    """Whether `value` is template text rather than a file's path."""
    return any(mark in value for mark in INLINE_MARKS)


def template_path(value: str, base_dir: Path | None) -> Path:
    """The file `value` names, a relative path taken from `base_dir` (else the current
    directory)."""
    text = value[len(FILE_SCHEME) :] if value.startswith(FILE_SCHEME) else value
    path = Path(text.strip()).expanduser()
    if not path.is_absolute():
        path = (base_dir if base_dir is not None else Path.cwd()) / path
    return path


def checked_source(
    value: str, base_dir: Path | None, confine: Callable[[Path], None] | None = None
) -> str:
    """What the config keeps for `chat_template: value`: the text as it is, or the file's
    absolute path once it is known to be a readable file. `confine` is set for a client's
    config: it refuses a path outside the allowed folders (before the file is looked at,
    so nothing is learnt of files elsewhere), and text is refused. ValueError (the loader
    puts it at the key's line) says what to fix."""
    if is_inline(value):
        if confine is not None:
            raise ValueError(
                "a config written through the API may not carry a chat template's text;"
                " name a .jinja file inside the folders the operator allows"
                " (server.allowed_dirs)"
            )
        return value
    if not value.strip():
        raise ValueError("chat_template is empty; give a .jinja file's path or the template")
    path = template_path(value, base_dir)
    try:
        if confine is not None:
            confine(path)
        read_template_file(path)
    except ConfigError as exc:
        raise ValueError(str(exc)) from None
    return str(path)


def read_template_file(path: Path) -> str:
    """The template text in `path`; ConfigError saying what is wrong with the file."""
    hint = (
        "give the path of a Jinja chat template (relative to the config file), or write the"
        " template inline (text with {{ or {% in it is read as the template)"
    )
    try:
        if not path.is_file():
            missing = "does not exist" if not path.exists() else "is not a file"
            raise ConfigError(f"chat template file {path} {missing}; {hint}")
        if path.stat().st_size > MAX_TEMPLATE_BYTES:
            raise ConfigError(
                f"chat template file {path} is larger than {MAX_TEMPLATE_BYTES} bytes;"
                " a chat template is a few kilobytes of Jinja"
            )
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ConfigError(f"chat template file {path} is not UTF-8 text; {hint}") from None
    except OSError as exc:
        raise ConfigError(f"cannot read chat template file {path}: {exc.strerror or exc}") from None
    if not is_inline(text):
        raise ConfigError(f"chat template file {path} holds no Jinja ({{{{ or {{%); {hint}")
    return text


def chat_template_text(value: str | None) -> str | None:
    """The template a model's `chat_template` stands for (read now, if it names a file);
    None when it has none, and the model keeps its own."""
    if value is None:
        return None
    if is_inline(value):
        return value
    return read_template_file(template_path(value, None))
