"""The eval reports kept under `FARMHAND_HOME/eval/`, for the playground:

    GET /api/eval/reports        the reports, newest first, each with a signed link
    GET /eval/reports/{name}     one report, by its signed link (?expires=&signature=)

The list sits behind the API key like every route. A report is opened by the browser
navigating to it, which carries no key, so its path is let through the key check
(`auth.GateMiddleware`) and the link's signature (`service.eval_reports`) stands in for the
key. The page is served under a policy that lets nothing load or run (its own stylesheets
are allowed by hash) in a sandbox of its own origin.
"""

from __future__ import annotations

from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from farmhand.dialects.ollama.errors import ollama_body
from farmhand.errors import FarmhandError
from farmhand.server.errors import error_response
from farmhand.server.json_response import JSONResponse
from farmhand.server.route_state import service_state

REPORT_PREFIX = "/eval/reports/"
"""Reports are read under this path, by their signed link instead of an API key."""


def is_report_path(path: str) -> bool:
    """A report's own path: one name under REPORT_PREFIX (its signed link is the key)."""
    return path.startswith(REPORT_PREFIX) and "/" not in path[len(REPORT_PREFIX) :]


def routes() -> list[BaseRoute]:
    return [
        Route("/api/eval/reports", listing, methods=["GET"]),
        Route(REPORT_PREFIX + "{name}", report, methods=["GET", "HEAD"]),
    ]


async def listing(request: Request) -> Response:
    reports = service_state(request).eval_reports()
    found = reports.listing()
    for entry in found:
        signed = {"expires": entry.pop("expires"), "signature": entry.pop("signature")}
        entry["url"] = f"{REPORT_PREFIX}{entry['name']}?{urlencode(signed)}"
    return JSONResponse({"folder": str(reports.folder), "reports": found})


async def report(request: Request) -> Response:
    query = request.query_params
    try:
        found = (
            service_state(request)
            .eval_reports()
            .read(request.path_params["name"], query.get("expires", ""), query.get("signature", ""))
        )
    except FarmhandError as exc:
        return error_response(exc, ollama_body)
    styles = " ".join(f"'{digest}'" for digest in found.style_hashes) or "'none'"
    policy = (
        f"default-src 'none'; style-src {styles}; base-uri 'none'; form-action 'none';"
        " frame-ancestors 'none'; sandbox"
    )
    headers = {
        "Content-Security-Policy": policy,
        "X-Content-Type-Options": "nosniff",
        "Referrer-Policy": "no-referrer",
        "Cache-Control": "no-store",
    }
    return Response(found.body, media_type="text/html; charset=utf-8", headers=headers)
