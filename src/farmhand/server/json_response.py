"""The JSON response every route answers with: Starlette's, rendered by `jsonwire`.

Starlette renders with json.dumps and refuses NaN with an exception (a 500); orjson is
several times faster and writes NaN as null, which is what a client can read.
"""

from __future__ import annotations

from typing import Any

from starlette import responses

from farmhand import jsonwire


class JSONResponse(responses.JSONResponse):
    def render(self, content: Any) -> bytes:
        return jsonwire.dumps(content)
