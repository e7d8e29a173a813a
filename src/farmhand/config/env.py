"""`${env:VAR}` references in config values, and masking the secrets they bring in.

A reference is `${env:NAME}` or `${env:NAME:-default}`; the default is used when NAME is
unset or empty (the shell's `:-`). Any number of references may sit inside one string,
e.g. `Bearer ${env:TOKEN}`. Substituted values are not scanned again.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any

from farmhand.errors import ConfigError

_REF = re.compile(r"\$\{env:([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")
_START = "${env:"


def expand_env(text: str, environ: Mapping[str, str] | None = None) -> str:
    """`text` with every reference replaced; ConfigError for unset or malformed ones."""
    env = os.environ if environ is None else environ
    missing: list[str] = []

    def substitute(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        value = env.get(name)
        if value is None or (value == "" and default is not None):
            if default is not None:
                return default
            if name not in missing:
                missing.append(name)
            return match.group(0)
        return value

    expanded = _REF.sub(substitute, text)
    bad = _malformed(text)
    if bad is not None:
        raise ConfigError(
            f"malformed reference {bad!r}; write ${{env:NAME}} or ${{env:NAME:-default}}"
        )
    if len(missing) == 1:
        name = missing[0]
        raise ConfigError(
            f"environment variable {name} is not set; export {name}=... "
            f"or give a default: ${{env:{name}:-value}}"
        )
    if missing:
        exports = " ".join(f"{n}=..." for n in missing)
        raise ConfigError(
            f"environment variables {', '.join(missing)} are not set; export {exports}"
        )
    return expanded


def _malformed(text: str) -> str | None:
    """The first `${env:` that does not start a well-formed reference, with what follows."""
    good = {m.start() for m in _REF.finditer(text)}
    at = text.find(_START)
    while at != -1:
        if at not in good:
            end = text.find("}", at)
            return text[at : end + 1] if end != -1 else text[at : at + 40]
        at = text.find(_START, at + 1)
    return None


# A name is secret when one of its words ends like a credential ("api_key", "GITHUB_TOKEN",
# "X-API-Key") or is an auth word; "max_tokens" and "tokenizer" are not, so no "tokens".
_WORD = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")
_SECRET_ENDINGS = (
    *("key", "keys", "token", "secret", "secrets", "password", "passwords", "passwd"),
    *("credential", "credentials"),
)
_SECRET_WORDS = frozenset({"auth", "authorization", "cookie", "bearer"})
_AUTH_SCHEMES = frozenset({"bearer", "basic", "token"})
_URL_PASSWORD = re.compile(r"(://[^/@:\s]+:)[^/@\s]+@")
MASK = "****"


def is_secret_name(name: str) -> bool:
    """Whether a key such as an env variable or header name holds a credential."""
    for word in _WORD.findall(name):
        lower = word.lower()
        if lower in _SECRET_WORDS or lower.endswith(_SECRET_ENDINGS):
            return True
    return False


def mask_value(value: str) -> str:
    """`****` plus the last 4 characters if the secret is long; keeps a `Bearer ` prefix."""
    if not value:
        return value
    prefix = ""
    scheme, space, rest = value.partition(" ")
    if space and scheme.lower() in _AUTH_SCHEMES:
        prefix, value = f"{scheme} ", rest
    tail = value[-4:] if len(value) >= 16 else ""
    return f"{prefix}{MASK}{tail}"


def mask_secrets(data: Any, *, secret: bool = False) -> Any:
    """A copy of plain data (dicts, lists, scalars) with credentials masked.

    Strings under a secret-looking key are masked, and so are passwords inside URLs
    (`https://user:pass@host`).
    """
    if isinstance(data, dict):
        return {
            key: mask_secrets(value, secret=isinstance(key, str) and is_secret_name(key))
            for key, value in data.items()
        }
    if isinstance(data, list):
        return [mask_secrets(item, secret=secret) for item in data]
    if isinstance(data, str):
        return mask_value(data) if secret else _URL_PASSWORD.sub(rf"\1{MASK}@", data)
    return data
