"""The eval reports kept under `FARMHAND_HOME/eval/` (`farmhand eval --html`), listed and
read for the playground.

A report is named by the client, so the name is held to what `keep_report` writes (letters,
digits, `-`, `_`, `.`, ending `.html`, no leading dot) and the file it names must sit in the
reports folder itself once every link is resolved: `../`, an absolute path, a backslash or
a symlink pointing out of the folder all read nothing.

A browser opens a report by navigating to it, which sends no API key; so the list gives
each report a signature made with the server's own key (HMAC over the name and an expiry)
for its link, and reading one checks the signature instead of an API key.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import html
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from farmhand.errors import AuthError, RequestError
from farmhand.paths import eval_reports_dir

REPORT_NAME = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9._-]{0,199}\.html")
LINK_SECONDS = 3600
EXPIRES = re.compile(r"[0-9]{1,12}")  # seconds since 1970, ASCII digits only
MAX_REPORT_BYTES = 64 * 1024 * 1024
STYLE = re.compile(rb"<style>(.*?)</style>", re.DOTALL)
TITLE = re.compile(rb"<title>(.*?)</title>", re.DOTALL)


@dataclass(frozen=True)
class Report:
    """A report's bytes and the hashes of its inline stylesheets (for its CSP)."""

    name: str
    body: bytes
    style_hashes: tuple[str, ...]


class EvalReports:
    """The reports folder under `home`, and the key its links are signed with."""

    def __init__(self, home: Path, link_key: bytes) -> None:
        self.folder = eval_reports_dir(home)
        self.link_key = link_key

    def listing(self, now: float | None = None) -> list[dict[str, Any]]:
        """Every report, newest first: name, title, size, time, and the expiry and
        signature of a link to it."""
        if not self.folder.is_dir():
            return []
        expires = int((now or time.time()) + LINK_SECONDS)
        found = []
        for path in self.folder.iterdir():
            if not REPORT_NAME.fullmatch(path.name) or self._inside(path) is None:
                continue
            stat = path.stat()
            found.append(
                {
                    "name": path.name,
                    "title": _title(path),
                    "bytes": stat.st_size,
                    "modified": int(stat.st_mtime),
                    "expires": expires,
                    "signature": self.signature(path.name, expires),
                }
            )
        return sorted(found, key=lambda r: (r["modified"], r["name"]), reverse=True)

    def read(self, name: str, expires: str, signature: str, now: float | None = None) -> Report:
        """The report `name` if its link is genuine and unexpired: RequestError (400) for a
        name no report can have, AuthError (401) for a bad or old link, 404 for none."""
        path = self._path(name)
        if not EXPIRES.fullmatch(expires) or not hmac.compare_digest(
            signature.encode(), self.signature(name, int(expires)).encode()
        ):
            raise AuthError(f"this link to report {name!r} is not one the server signed")
        if int(expires) < (now or time.time()):
            raise AuthError(
                f"the link to report {name!r} has expired; open it again from the playground"
            )
        found = self._inside(path)
        if found is None or not found.is_file():
            raise RequestError(f"no eval report is named {name!r}", status=404)
        if found.stat().st_size > MAX_REPORT_BYTES:
            raise RequestError(f"report {name!r} is larger than {MAX_REPORT_BYTES} bytes")
        body = found.read_bytes()
        return Report(name, body, tuple(_hash(css) for css in STYLE.findall(body)))

    def _path(self, name: str) -> Path:
        if not REPORT_NAME.fullmatch(name) or ".." in name:
            raise RequestError(
                f"{name!r} is not the name of an eval report: a report is named like"
                " 20261127-101500-builtin.html (GET /api/eval/reports lists them)",
                param="name",
            )
        return self.folder / name

    def _inside(self, path: Path) -> Path | None:
        """`path` with its links resolved, if that is still a file of the folder itself."""
        try:
            real = path.resolve(strict=True)
            folder = self.folder.resolve(strict=True)
        except OSError:
            return None
        return real if real.parent == folder else None

    def signature(self, name: str, expires: int) -> str:
        """The signature of a link to `name` valid until `expires` (seconds since 1970)."""
        message = f"{name}\n{expires}".encode()
        return hmac.new(self.link_key, message, hashlib.sha256).hexdigest()


def _title(path: Path) -> str:
    with path.open("rb") as file:
        head = file.read(4096)
    found = TITLE.search(head)
    return html.unescape(found.group(1).decode("utf-8", "replace").strip()) if found else path.name


def _hash(css: bytes) -> str:
    return "sha256-" + base64.b64encode(hashlib.sha256(css).digest()).decode()
