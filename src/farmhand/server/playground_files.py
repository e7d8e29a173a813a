"""The playground's files: a fixed list shipped inside the package (no build step, no CDN).

Served by name from this list only, so no request path ever reaches the file system. They
are open like `/` (the page asks for the API key itself; the files hold no secrets), and
every answer carries a Content-Security-Policy that lets the page load nothing but these
files and talk to nothing but this server.
"""

from __future__ import annotations

from importlib import resources

PREFIX = "/playground/"
MEDIA_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
}
ASSETS = (
    "api.js",
    "chat.js",
    "conversations.js",
    "favicon.svg",
    "forms.js",
    "main.js",
    "panel.js",
    "reports.js",
    "style.css",
)
PAGE = "index.html"
FAVICON = "favicon.svg"
FAVICON_PATH = "/favicon.ico"
ASSET_PATHS = frozenset(PREFIX + name for name in ASSETS)
CONTENT_SECURITY_POLICY = "; ".join(
    [
        "default-src 'none'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self'",
        "connect-src 'self'",
        "base-uri 'none'",
        "form-action 'none'",
        "frame-ancestors 'none'",
    ]
)
SECURITY_HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-cache",
}


def read(name: str) -> bytes:
    """The bytes of the page (`PAGE`) or of one of `ASSETS`; KeyError for anything else."""
    if name != PAGE and name not in ASSETS:
        raise KeyError(name)
    return (resources.files("farmhand.server") / "playground" / name).read_bytes()


def media_type(name: str) -> str:
    return MEDIA_TYPES[name[name.rfind(".") :]]
